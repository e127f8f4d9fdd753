/**
 * @module answers
 * The answers half of the paid search API: pure library code (no HTTP, no payment). The server
 * calls {@link Answerer.answer} with the route and its query string after payment has been
 * verified, and is charged for only when the result has status 200.
 */
export type {
  AnswerResult,
  Area,
  DataProvider,
  Deal,
  EventItem,
  Hotel,
  Place,
  ResortOperator,
  SourceInfo,
  StayTier,
  TicketPrice,
} from './types.js';
export { createAnswerer } from './answerer.js';
export type { Answerer, AnswererOptions } from './answerer.js';
export { createSampleProvider, SAMPLE_SOURCE } from '../data/sample.js';
export type { SampleProviderOptions } from '../data/sample.js';
export { ParamError } from './params.js';
