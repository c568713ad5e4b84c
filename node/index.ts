/**
 * The service as an HTTP server, and `init` for scripts that set up an app.
 *
 * @module swbucket/node
 */
export { startServer, formatLogLine, type ServerOptions, type RunningServer } from './server.ts';
export { init, InitError, type InitOptions, type InitResult } from './init.ts';
