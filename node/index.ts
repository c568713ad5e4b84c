// swbucket/node: the service as an HTTP server, and `init` for scripts that set up an app.
export { startServer, formatLogLine, type ServerOptions, type RunningServer } from './server.ts';
export { init, InitError, type InitOptions, type InitResult } from './init.ts';
