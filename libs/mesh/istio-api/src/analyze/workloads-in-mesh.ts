/**
 * Which pods count as workloads for `istioctl analyze` (`util.PodInMesh`, `PodInAmbientMode`):
 * a pod with an `istio-proxy` container, or whose `sidecar.istio.io/inject` label or annotation
 * is "true", or (when neither is set) whose namespace has `istio-injection: enabled`; and any
 * pod annotated `ambient.istio.io/redirection: enabled`.
 */
import type { NamespaceObject, PodObject } from '../model/inventory';

const SIDECAR_INJECT = 'sidecar.istio.io/inject';
const NAMESPACE_INJECTION_LABEL = 'istio-injection';
const AMBIENT_REDIRECTION = 'ambient.istio.io/redirection';

function hasIstioProxy(pod: PodObject): boolean {
  return [...pod.containers, ...pod.initContainers].some((container) => container.name === 'istio-proxy' && container.image !== '');
}

function sidecarInMesh(pod: PodObject, namespaces: ReadonlyMap<string, NamespaceObject>): boolean {
  if (hasIstioProxy(pod)) return true;
  const label = pod.metadata.labels[SIDECAR_INJECT];
  if (label !== undefined) return label === 'true';
  const annotation = pod.metadata.annotations[SIDECAR_INJECT];
  if (annotation !== undefined) return annotation === 'true';
  const namespace = namespaces.get(pod.metadata.namespace);
  return namespace !== undefined && namespace.metadata.labels[NAMESPACE_INJECTION_LABEL] === 'enabled';
}

/** Labels of in-mesh pods per namespace (a pod in both modes is listed twice, as in istioctl). */
export function meshPodLabelsByNamespace(
  pods: readonly PodObject[],
  namespaces: ReadonlyMap<string, NamespaceObject>,
): Map<string, Readonly<Record<string, string>>[]> {
  const byNamespace = new Map<string, Readonly<Record<string, string>>[]>();
  for (const pod of pods) {
    const list = byNamespace.get(pod.metadata.namespace) ?? [];
    if (sidecarInMesh(pod, namespaces)) list.push(pod.metadata.labels);
    if (pod.metadata.annotations[AMBIENT_REDIRECTION] === 'enabled') list.push(pod.metadata.labels);
    byNamespace.set(pod.metadata.namespace, list);
  }
  return byNamespace;
}

/** True when every selector label is present with the same value (Kubernetes `SelectorFromSet`). */
export function selectorMatches(matchLabels: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(matchLabels).every(([key, value]) => labels[key] === value);
}

/** Kubernetes' rendering of a set selector: `k=v` pairs sorted by key, comma-separated. */
export function selectorText(matchLabels: Readonly<Record<string, string>>): string {
  return Object.keys(matchLabels)
    .sort()
    .map((key) => `${key}=${matchLabels[key] ?? ''}`)
    .join(',');
}
