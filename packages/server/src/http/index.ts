export * from './app.js';
export * from './auth.js';
export * from './files.js';
export * from './listen.js';
