// For in-process embedding (tests, the local launcher): the app's public surface.
export { createGateway, type Gateway, type GatewayDeps } from './gateway';
export { gatewayConfig, gatewayConfigSchema, grpcMaxReceiveBytes, type GatewayConfig } from './config';
export type { AuthenticateHooks } from '@ward/etcd/authenticate';
