// Module hooks for measure.mjs: the runtime modules the generators' packages import at load
// time but never use to render types (Cloudflare's Workers runtime, the UTCP client, isolated-vm)
// resolve to empty stand-ins, so the published generators load under plain Node.
const stubs = {
  "cloudflare:workers": "export class DurableObject {} export class RpcTarget {} export class WorkerEntrypoint {}",
  "@utcp/sdk": "export class UtcpClient {}",
  "isolated-vm": "export default {}",
};

export async function resolve(specifier, context, next) {
  if (Object.hasOwn(stubs, specifier)) {
    return { url: "data:text/javascript," + encodeURIComponent(stubs[specifier]), shortCircuit: true };
  }
  return next(specifier, context);
}
