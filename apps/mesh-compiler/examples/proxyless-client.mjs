// A proxyless gRPC client resolving a service declared to `ward-mesh serve --xds` through xDS.
//
//   GRPC_XDS_BOOTSTRAP=bootstrap.json node apps/mesh-compiler/examples/proxyless-client.mjs \
//     xds:///echo.default.svc.cluster.local:7070 Echo
//
// bootstrap.json is what istio-agent writes for a proxyless pod: `xds_servers` pointing at
// ward-mesh's ADS address (channel_creds insecure), and a `node` with `id`, `metadata.NAMESPACE`
// and `locality: {}` (grpc-js-xds refuses a node without it). The client asks LDS for the target's
// `host:port`, then RDS, CDS and EDS, and calls the endpoint ward-mesh serves. Prints the reply,
// or the status code name and details (exit 1). Needs the dev dependency @grpc/grpc-js-xds.
import * as grpc from '@grpc/grpc-js';
import * as xds from '@grpc/grpc-js-xds';

const [target = 'xds:///echo.default.svc.cluster.local:7070', method = 'Echo', service = 'ward.example.Echo'] = process.argv.slice(2);
xds.register(); // the xds: resolver and the client-side HTTP filters

const same = (b) => b;
const client = new grpc.Client(target, grpc.credentials.createInsecure());
client.makeUnaryRequest(`/${service}/${method}`, same, same, Buffer.from('hello'), new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (error, reply) => {
  if (error) {
    console.log(`${grpc.status[error.code] ?? error.code}: ${error.details}`);
    process.exitCode = 1;
  } else {
    console.log(`OK: ${reply.toString()}`);
  }
  client.close();
  process.exit();
});
