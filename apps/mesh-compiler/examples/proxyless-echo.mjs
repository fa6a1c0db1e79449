// A proxyless gRPC echo server protected by policies served by `ward-mesh serve --xds`.
//
//   npm run ward-mesh -- serve --xds 127.0.0.1:15010 --policies policies/ &
//   GRPC_XDS_EXPERIMENTAL_RBAC=true node apps/mesh-compiler/examples/proxyless-echo.mjs 127.0.0.1:15010 50051
//
// The bootstrap is the one istio-agent writes for a proxyless workload (node id, NAMESPACE,
// LABELS, POD_PORTS; the listener name template istiod serves), made in memory here. Needs the
// dev dependency @grpc/grpc-js-xds.
import * as grpc from '@grpc/grpc-js';
import * as xds from '@grpc/grpc-js-xds';

const [xdsAddress = '127.0.0.1:15010', portText = '50051', namespace = 'default', app = 'echo'] = process.argv.slice(2);
const port = Number(portText);
if (process.env.GRPC_XDS_EXPERIMENTAL_RBAC !== 'true') {
  console.error('set GRPC_XDS_EXPERIMENTAL_RBAC=true: without it grpc-js-xds rejects listeners carrying RBAC filters');
  process.exit(2);
}
xds.register(); // registers the router and RBAC HTTP filters, which XdsServer needs

const bootstrap = {
  xds_servers: [{ server_uri: xdsAddress, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
  node: {
    id: `sidecar~127.0.0.1~${app}-0.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, LABELS: { app }, GENERATOR: 'grpc', POD_PORTS: JSON.stringify([{ name: 'grpc', containerPort: port, protocol: 'TCP' }]) },
    locality: {}, // grpc-js-xds refuses a bootstrap node without it
  },
  server_listener_resource_name_template: 'xds.istio.io/grpc/lds/inbound/%s',
};
const options = process.env.GRPC_XDS_BOOTSTRAP ? {} : { 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': JSON.stringify(bootstrap) };
const server = new xds.XdsServer(options);
const same = (b) => b;
const method = (name) => ({ path: `/ward.example.Echo/${name}`, requestStream: false, responseStream: false, requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same });
server.addService({ Echo: method('Echo'), Admin: method('Admin') }, { Echo: (call, cb) => cb(null, call.request), Admin: (call, cb) => cb(null, Buffer.from('admin')) });
server.bindAsync(`127.0.0.1:${port}`, new xds.XdsServerCredentials(grpc.ServerCredentials.createInsecure()), (error) => {
  if (error) {
    console.error(error.message);
    process.exit(1);
  }
  console.log(`serving on 127.0.0.1:${port} with the listener ward-mesh serves for ${namespace}/${app}`);
});
