// @ward/mesh/envoy-api: Envoy's v3 protos (generated from the protos @grpc/grpc-js-xds ships),
// protojson types of the messages the mesh compiler emits, and a strict schema check.
export { checkEnvoyAny, checkEnvoyMessage, encodeEnvoyMessage, toProtoLoaderObject } from './envoy-check';
export type { EnvoyCheckFailure, EnvoyCheckResult, EnvoyCheckSuccess } from './envoy-check';
export { envoyRoot, findMessageType, typeNameOfUrl, TYPE_URL_PREFIX } from './envoy-root';
export { MAX_DECODE_DEPTH } from './protojson-decode';
export type { SchemaIssue, SchemaIssueCode, SchemaWarning } from './schema-issue';
export { FILTER_NAMES, MESSAGE_NAMES, TYPE_URLS } from './type-urls';

// protojson shapes (camelCase field names, Any as `{'@type': ...}`, Duration as "1.5s", wrappers as
// bare values), named after the Envoy message they describe.
export type {
  AnyJson,
  envoy_config_core_v3_Address as Address,
  envoy_config_core_v3_ApiConfigSource as ApiConfigSource,
  envoy_config_core_v3_CidrRange as CidrRange,
  envoy_config_core_v3_ConfigSource as ConfigSource,
  envoy_config_core_v3_GrpcService as GrpcService,
  envoy_config_core_v3_HeaderValue as HeaderValue,
  envoy_config_core_v3_HeaderValueOption as HeaderValueOption,
  envoy_config_core_v3_HttpUri as HttpUri,
  envoy_config_core_v3_SocketAddress as SocketAddress,
  envoy_config_core_v3_TransportSocket as TransportSocket,
  envoy_config_core_v3_TypedExtensionConfig as TypedExtensionConfig,
  envoy_config_listener_v3_Filter as NetworkFilter,
  envoy_config_listener_v3_FilterChain as FilterChain,
  envoy_config_listener_v3_FilterChainMatch as FilterChainMatch,
  envoy_config_listener_v3_Listener as Listener,
  envoy_config_listener_v3_ListenerFilter as ListenerFilter,
  envoy_config_listener_v3_ListenerFilterChainMatchPredicate as ListenerFilterChainMatchPredicate,
  envoy_config_rbac_v3_Permission as Permission,
  envoy_config_rbac_v3_Policy as Policy,
  envoy_config_rbac_v3_Principal as Principal,
  envoy_config_rbac_v3_RBAC as RBAC,
  envoy_config_rbac_v3_RBAC_Action as RBACAction,
  envoy_config_route_v3_HeaderMatcher as HeaderMatcher,
  envoy_config_route_v3_RouteConfiguration as RouteConfiguration,
  envoy_extensions_filters_http_ext_authz_v3_AuthorizationRequest as AuthorizationRequest,
  envoy_extensions_filters_http_ext_authz_v3_AuthorizationResponse as AuthorizationResponse,
  envoy_extensions_filters_http_ext_authz_v3_BufferSettings as BufferSettings,
  envoy_extensions_filters_http_ext_authz_v3_ExtAuthz as HttpExtAuthz,
  envoy_extensions_filters_http_ext_authz_v3_HttpService as HttpService,
  envoy_extensions_filters_http_rbac_v3_RBAC as HttpRBACConfig,
  envoy_extensions_filters_network_ext_authz_v3_ExtAuthz as NetworkExtAuthz,
  envoy_extensions_filters_network_http_connection_manager_v3_HttpConnectionManager as HttpConnectionManager,
  envoy_extensions_filters_network_http_connection_manager_v3_HttpFilter as HttpFilter,
  envoy_extensions_filters_network_rbac_v3_RBAC as NetworkRBACConfig,
  envoy_extensions_filters_network_tcp_proxy_v3_TcpProxy as TcpProxy,
  envoy_extensions_path_match_uri_template_v3_UriTemplateMatchConfig as UriTemplateMatchConfig,
  envoy_extensions_transport_sockets_tls_v3_CommonTlsContext as CommonTlsContext,
  envoy_extensions_transport_sockets_tls_v3_DownstreamTlsContext as DownstreamTlsContext,
  envoy_extensions_transport_sockets_tls_v3_SdsSecretConfig as SdsSecretConfig,
  envoy_extensions_transport_sockets_tls_v3_TlsParameters as TlsParameters,
  envoy_type_matcher_v3_ListMatcher as ListMatcher,
  envoy_type_matcher_v3_ListStringMatcher as ListStringMatcher,
  envoy_type_matcher_v3_MetadataMatcher as MetadataMatcher,
  envoy_type_matcher_v3_MetadataMatcher_PathSegment as MetadataPathSegment,
  envoy_type_matcher_v3_PathMatcher as PathMatcher,
  envoy_type_matcher_v3_StringMatcher as StringMatcher,
  envoy_type_matcher_v3_ValueMatcher as ValueMatcher,
  envoy_type_v3_HttpStatus as HttpStatus,
  envoy_type_v3_StatusCode as StatusCode,
} from './generated/types';
