/**
 * The shape of `istio.mesh.v1alpha1.MeshConfig` as far as ward decodes it: every top-level field
 * name of the proto (so a misspelling is told apart from a field ward does not read), full types
 * for the fields the security translation uses, and `opaque` for the others.
 */

/** How one field is decoded. */
export type MeshFieldType =
  | { readonly kind: 'string' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'uint32' }
  | { readonly kind: 'int32' }
  | { readonly kind: 'duration' }
  | { readonly kind: 'strings' }
  | { readonly kind: 'string-map' }
  | { readonly kind: 'enum'; readonly values: readonly string[] }
  | { readonly kind: 'message'; readonly message: () => MeshMessage }
  | { readonly kind: 'messages'; readonly message: () => MeshMessage }
  /** A field ward does not read: any value is accepted and dropped. */
  | { readonly kind: 'opaque' };

export interface MeshField {
  /** protojson (lowerCamelCase) name; the proto (snake_case) name is accepted too. */
  readonly json: string;
  readonly proto: string;
  readonly type: MeshFieldType;
  /** Fields of one oneof: at most one may be set. */
  readonly oneof?: string;
}

export interface MeshMessage {
  readonly name: string;
  readonly fields: readonly MeshField[];
}

const STRING = { kind: 'string' } as const;
const BOOL = { kind: 'bool' } as const;
const UINT32 = { kind: 'uint32' } as const;
const INT32 = { kind: 'int32' } as const;
const DURATION = { kind: 'duration' } as const;
const STRINGS = { kind: 'strings' } as const;
const OPAQUE = { kind: 'opaque' } as const;

function field(json: string, type: MeshFieldType, oneof?: string, proto?: string): MeshField {
  return { json, proto: proto ?? json.replace(/[A-Z]/gu, (letter) => `_${letter.toLowerCase()}`), type, ...(oneof === undefined ? {} : { oneof }) };
}

export const REQUEST_BODY_MESSAGE: MeshMessage = {
  name: 'EnvoyExternalAuthorizationRequestBody',
  fields: [field('maxRequestBytes', UINT32), field('allowPartialMessage', BOOL), field('packAsBytes', BOOL)],
};

const EXT_AUTHZ_COMMON: readonly MeshField[] = [
  field('service', STRING),
  field('port', UINT32),
  field('timeout', DURATION),
  field('failOpen', BOOL),
  field('clearRouteCache', BOOL),
  field('statusOnError', STRING),
  field('includeRequestBodyInCheck', { kind: 'message', message: () => REQUEST_BODY_MESSAGE }),
];

export const EXT_AUTHZ_GRPC_MESSAGE: MeshMessage = { name: 'EnvoyExternalAuthorizationGrpcProvider', fields: EXT_AUTHZ_COMMON };

export const EXT_AUTHZ_HTTP_MESSAGE: MeshMessage = {
  name: 'EnvoyExternalAuthorizationHttpProvider',
  fields: [
    ...EXT_AUTHZ_COMMON,
    field('pathPrefix', STRING),
    field('includeHeadersInCheck', STRINGS),
    field('includeRequestHeadersInCheck', STRINGS),
    field('includeAdditionalHeadersInCheck', { kind: 'string-map' }),
    field('headersToUpstreamOnAllow', STRINGS),
    field('headersToDownstreamOnDeny', STRINGS),
    field('headersToDownstreamOnAllow', STRINGS),
  ],
};

/** Provider kinds other than ext_authz: known, not read. */
export const OTHER_PROVIDER_KINDS = [
  'zipkin', 'lightstep', 'datadog', 'stackdriver', 'opencensus', 'skywalking', 'opentelemetry', 'prometheus',
  'envoyFileAccessLog', 'envoyHttpAls', 'envoyTcpAls', 'envoyOtelAls', 'sds',
] as const;

export const EXTENSION_PROVIDER_MESSAGE: MeshMessage = {
  name: 'MeshConfig.ExtensionProvider',
  fields: [
    field('name', STRING),
    field('envoyExtAuthzHttp', { kind: 'message', message: () => EXT_AUTHZ_HTTP_MESSAGE }, 'provider'),
    field('envoyExtAuthzGrpc', { kind: 'message', message: () => EXT_AUTHZ_GRPC_MESSAGE }, 'provider'),
    ...OTHER_PROVIDER_KINDS.map((kind) => field(kind, OPAQUE, 'provider')),
  ],
};

export const TLS_CONFIG_MESSAGE: MeshMessage = {
  name: 'MeshConfig.TLSConfig',
  fields: [
    field('minProtocolVersion', { kind: 'enum', values: ['TLS_AUTO', 'TLSV1_2', 'TLSV1_3'] }),
    field('ecdhCurves', STRINGS),
    field('cipherSuites', STRINGS),
  ],
};

export const CERTIFICATE_DATA_MESSAGE: MeshMessage = {
  name: 'MeshConfig.CertificateData',
  fields: [
    field('pem', STRING, 'certificateData'),
    field('spiffeBundleUrl', STRING, 'certificateData'),
    field('certSigners', STRINGS),
    field('trustDomains', STRINGS),
  ],
};

/** Top-level MeshConfig fields ward does not read (istiod's current proto). */
const OPAQUE_TOP_LEVEL = [
  'proxyListenPort', 'proxyHttpPort', 'connectTimeout', 'hboneIdleTimeout', 'tcpKeepalive', 'ingressClass', 'ingressService',
  'ingressControllerMode', 'ingressSelector', 'enableTracing', 'accessLogFile', 'accessLogFormat', 'accessLogEncoding',
  'enableEnvoyAccessLogService', 'disableEnvoyListenerLog', 'defaultConfig', 'outboundTrafficPolicy', 'inboundTrafficPolicy',
  'configSources', 'enableAutoMtls', 'defaultServiceExportTo', 'defaultVirtualServiceExportTo', 'defaultDestinationRuleExportTo',
  'localityLbSetting', 'zoneAwareLbSetting', 'dnsRefreshRate', 'h2UpgradePolicy', 'inboundClusterStatName', 'outboundClusterStatName',
  'certificates', 'serviceSettings', 'serviceScopeConfigs', 'enablePrometheusMerge', 'verifyCertificateAtClient', 'ca',
  'defaultProviders', 'discoverySelectors', 'pathNormalization', 'defaultHttpRetryPolicy', 'tlsDefaults', 'defaultTrafficPolicy',
  'serviceEntryVisibility',
] as const;

export const MESH_CONFIG_MESSAGE: MeshMessage = {
  name: 'MeshConfig',
  fields: [
    field('rootNamespace', STRING),
    field('trustDomain', STRING),
    field('trustDomainAliases', STRINGS),
    field('caCertificates', { kind: 'messages', message: () => CERTIFICATE_DATA_MESSAGE }),
    field('extensionProviders', { kind: 'messages', message: () => EXTENSION_PROVIDER_MESSAGE }),
    field('proxyInboundListenPort', INT32),
    field('protocolDetectionTimeout', DURATION),
    field('meshMTLS', { kind: 'message', message: () => TLS_CONFIG_MESSAGE }, undefined, 'mesh_mTLS'),
    ...OPAQUE_TOP_LEVEL.map((name) => field(name, OPAQUE)),
  ],
};
