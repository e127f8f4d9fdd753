export * from './app.js';
export * from './auth.js';
export * from './files.js';
export * from './listen.js';
export { EXPOSITION_CONTENT_TYPE, httpMetricFamilies, httpMetrics, MetricsRegistry, metricsHandler, readyResponse, type Counter, type Gauge, type Histogram, type HttpMetrics, type LabelValues, type ReadyCheck } from './metrics.js';
