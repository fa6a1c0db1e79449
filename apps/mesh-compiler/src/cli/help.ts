/** `ward-mesh help`. */
export const HELP_TEXT = `ward-mesh: Istio AuthorizationPolicy and PeerAuthentication, offline.

Usage:
  ward-mesh validate <file|dir|->... [-o text|json|yaml] [--strict] [--analyze] [--advice] [--compat] [-n ns]
  ward-mesh compile  <file|dir|->... --workload ns/name [--labels k=v,...] [--ports 8080/HTTP,...] [-o yaml|json]
  ward-mesh explain  <file|dir|->... --workload ns/name [--labels k=v,...] [request flags] [--expect allow|deny|reset] [-o text|yaml|json]
  ward-mesh serve    (HTTP function: POST /validate, /compile, /explain; configured by MESH_COMPILER_* variables)
  ward-mesh serve --xds host:port [--policies dir] [--xds-tls-cert pem --xds-tls-key pem --xds-tls-ca pem]
                     (also an xDS control plane for proxyless gRPC servers and clients: ADS on
                     host:port, plaintext unless the three --xds-tls-* files are given (then mTLS,
                     client certificates from the CA required); policies, and v1 Service and
                     Endpoints documents for xds:/// clients, from the watched dir and
                     PUT /xds/policies; GET /xds/status)

Inputs are files, directories (walked for .yaml, .yml and .json) or - for stdin; documents may be
multi-document YAML or JSON.

validate prints what istioctl validate prints, followed by the file, line and field path of each
finding: "<file>" is valid, "<file>" has warnings (exit 0), or Error: ... (exit 1).
  --strict        warnings fail too (exit 1), for CI pipelines
  --analyze       print istioctl analyze messages instead (IST0101, IST0106, IST0127, IST0133);
                  Namespace and Pod documents in the inputs are the cluster inventory
  --advice        add ward's advisory warnings (known production accidents)
  --compat        exact istioctl text, without locations
  -n, --namespace namespace assumed for resources without one (default "default")

compile/explain workload flags:
  --workload ns/name            the workload (pod) the configuration is for
  --labels k=v,...              its labels
  --ports 8080/HTTP,9000/TCP    its container ports and protocols
  --root-namespace ns           mesh root namespace (default istio-system)
  --trust-domain td             mesh trust domain (default cluster.local)
  --trust-domain-aliases a,b    trust domain aliases
  --mesh-config file            the mesh config: MeshConfig YAML, the istio ConfigMap or an
                                IstioOperator (extension providers for CUSTOM policies, trust
                                domain and aliases, root namespace); the flags above override it

explain request flags:
  --method GET --path /x --host example.com --port 8080 --header k=v (repeatable)
  --source-principal cluster.local/ns/a/sa/b --source-ip 10.0.0.1 --remote-ip 10.0.0.1
  --request-principal issuer/subject --tls mtls|plaintext|tls --sni name
  --ext-authz allow|deny        what the external authorizer of a CUSTOM policy answers (allow)
  --expect allow|deny|reset     for CI pipelines: exit 0 when the decision is this one, 1 when not
                                (deny: 403 or a connection closed by a filter; reset: no filter
                                chain, a failed mTLS handshake or a protocol error)

Exit codes: 0 valid (warnings allowed) or decision as expected, 1 invalid input, a decision other
than --expect, or rules that could not be translated faithfully, 2 usage error, 70 internal error.
`;
