export { createHttpServer, type HttpServerOptions } from './server';
