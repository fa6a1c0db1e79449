// Names and type URLs of the Envoy extensions the mesh compiler emits.

/** Filter names as istiod writes them. */
export const FILTER_NAMES = Object.freeze({
  httpRbac: 'envoy.filters.http.rbac',
  httpExtAuthz: 'envoy.filters.http.ext_authz',
  networkRbac: 'envoy.filters.network.rbac',
  networkExtAuthz: 'envoy.filters.network.ext_authz',
  httpConnectionManager: 'envoy.filters.network.http_connection_manager',
  tcpProxy: 'envoy.filters.network.tcp_proxy',
  router: 'envoy.filters.http.router',
  httpFault: 'envoy.filters.http.fault',
  originalDst: 'envoy.filters.listener.original_dst',
  tlsInspector: 'envoy.filters.listener.tls_inspector',
  httpInspector: 'envoy.filters.listener.http_inspector',
  tlsTransportSocket: 'envoy.transport_sockets.tls',
  uriTemplate: 'uri-template',
});

const PREFIX = 'type.googleapis.com/';

/** `@type` values of the typed configs the compiler emits. */
export const TYPE_URLS = Object.freeze({
  httpRbac: `${PREFIX}envoy.extensions.filters.http.rbac.v3.RBAC`,
  networkRbac: `${PREFIX}envoy.extensions.filters.network.rbac.v3.RBAC`,
  httpExtAuthz: `${PREFIX}envoy.extensions.filters.http.ext_authz.v3.ExtAuthz`,
  networkExtAuthz: `${PREFIX}envoy.extensions.filters.network.ext_authz.v3.ExtAuthz`,
  httpConnectionManager: `${PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  tcpProxy: `${PREFIX}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`,
  router: `${PREFIX}envoy.extensions.filters.http.router.v3.Router`,
  httpFault: `${PREFIX}envoy.extensions.filters.http.fault.v3.HTTPFault`,
  originalDst: `${PREFIX}envoy.extensions.filters.listener.original_dst.v3.OriginalDst`,
  tlsInspector: `${PREFIX}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`,
  httpInspector: `${PREFIX}envoy.extensions.filters.listener.http_inspector.v3.HttpInspector`,
  downstreamTlsContext: `${PREFIX}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  uriTemplateMatch: `${PREFIX}envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig`,
});

/** Full message names of the resources the compiler emits, for {@link checkEnvoyMessage}. */
export const MESSAGE_NAMES = Object.freeze({
  httpFilter: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter',
  networkFilter: 'envoy.config.listener.v3.Filter',
  listener: 'envoy.config.listener.v3.Listener',
  rbac: 'envoy.config.rbac.v3.RBAC',
  routeConfiguration: 'envoy.config.route.v3.RouteConfiguration',
  cluster: 'envoy.config.cluster.v3.Cluster',
  clusterLoadAssignment: 'envoy.config.endpoint.v3.ClusterLoadAssignment',
});
