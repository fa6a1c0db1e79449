/**
 * Kubernetes objects that are not policies but that the analyzers need: namespaces (to find
 * referenced namespaces) and pods (to find the workloads a selector matches).
 */
import type { ObjectMeta } from './meta';

/** A core/v1 Namespace. */
export interface NamespaceObject {
  readonly apiVersion: 'v1';
  readonly kind: 'Namespace';
  readonly metadata: ObjectMeta;
}

/** A container of a pod, as far as the analyzers look at it. */
export interface PodContainer {
  readonly name: string;
  readonly image: string;
}

/** A core/v1 Pod: metadata plus its containers and init containers. */
export interface PodObject {
  readonly apiVersion: 'v1';
  readonly kind: 'Pod';
  readonly metadata: ObjectMeta;
  readonly containers: readonly PodContainer[];
  readonly initContainers: readonly PodContainer[];
}
