/**
 * The part of Istio's MeshConfig (`istio.mesh.v1alpha1.MeshConfig`) the security translation
 * reads, with JSON field names. Fields absent from the file are absent here; istiod's defaults
 * apply to them.
 */

/** `EnvoyExternalAuthorizationRequestBody`. */
export interface MeshConfigRequestBody {
  readonly maxRequestBytes?: number;
  readonly allowPartialMessage?: boolean;
  readonly packAsBytes?: boolean;
}

/** `EnvoyExternalAuthorizationGrpcProvider`. */
export interface MeshConfigExtAuthzGrpc {
  /** `[<namespace>/]<hostname>` of the authorization service; `''` when absent. */
  readonly service: string;
  /** `0` when absent. */
  readonly port: number;
  /** Protojson duration text as written, e.g. `"0.5s"`. */
  readonly timeout?: string;
  readonly failOpen?: boolean;
  readonly clearRouteCache?: boolean;
  readonly statusOnError?: string;
  readonly includeRequestBodyInCheck?: MeshConfigRequestBody;
}

/** `EnvoyExternalAuthorizationHttpProvider`. */
export interface MeshConfigExtAuthzHttp extends MeshConfigExtAuthzGrpc {
  readonly pathPrefix?: string;
  readonly includeRequestHeadersInCheck?: readonly string[];
  readonly includeHeadersInCheck?: readonly string[];
  readonly includeAdditionalHeadersInCheck?: Readonly<Record<string, string>>;
  readonly headersToUpstreamOnAllow?: readonly string[];
  readonly headersToDownstreamOnDeny?: readonly string[];
  readonly headersToDownstreamOnAllow?: readonly string[];
}

/**
 * `MeshConfig.ExtensionProvider`: a name and one provider. Only the two ext_authz kinds are
 * decoded; `kind` names the provider field that was set (`zipkin`, `prometheus`, ...).
 */
export interface MeshConfigExtensionProvider {
  readonly name: string;
  readonly kind?: string;
  readonly envoyExtAuthzGrpc?: MeshConfigExtAuthzGrpc;
  readonly envoyExtAuthzHttp?: MeshConfigExtAuthzHttp;
}

/** `MeshConfig.TLSConfig` of `meshMTLS`. */
export interface MeshConfigTlsSettings {
  readonly minProtocolVersion?: 'TLS_AUTO' | 'TLSV1_2' | 'TLSV1_3';
  /** istiod rejects a mesh config that sets these for mesh mTLS. */
  readonly ecdhCurves?: readonly string[];
  readonly cipherSuites?: readonly string[];
}

/** The MeshConfig fields that affect the inbound security configuration of a sidecar. */
export interface MeshConfig {
  readonly rootNamespace?: string;
  readonly trustDomain?: string;
  /** Sorted and without duplicates, as istiod keeps them. */
  readonly trustDomainAliases?: readonly string[];
  /** `caCertificates[].trustDomains`, flattened in order. */
  readonly caCertificateTrustDomains?: readonly string[];
  readonly extensionProviders?: readonly MeshConfigExtensionProvider[];
  readonly proxyInboundListenPort?: number;
  /** Protojson duration text as written. */
  readonly protocolDetectionTimeout?: string;
  readonly meshMtls?: MeshConfigTlsSettings;
}

/** Which form the file had. */
export type MeshConfigForm =
  /** The MeshConfig itself (the `mesh` key of the `istio` ConfigMap). */
  | 'mesh-config'
  /** A `v1 ConfigMap` whose `data.mesh` holds the MeshConfig YAML. */
  | 'config-map'
  /** An `IstioOperator` with `spec.meshConfig`. */
  | 'istio-operator';
