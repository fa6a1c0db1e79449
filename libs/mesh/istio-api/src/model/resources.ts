/** The union of everything the loader decodes, with where each resource came from. */
import type { AuthorizationPolicy } from './authorization-policy';
import type { NamespaceObject, PodObject } from './inventory';
import type { FieldPositions, ResourceOrigin } from './meta';
import type { PeerAuthentication } from './peer-authentication';

/** The two Istio security kinds ward compiles. */
export type SecurityResource = AuthorizationPolicy | PeerAuthentication;

/** Kubernetes objects read only as context by the analyzers. */
export type InventoryResource = NamespaceObject | PodObject;

/** Any decoded resource. */
export type MeshResource = SecurityResource | InventoryResource;

/** A decoded resource, its origin and the position of each of its fields. */
export interface LoadedResource<T extends MeshResource = MeshResource> {
  readonly resource: T;
  readonly origin: ResourceOrigin;
  readonly positions: FieldPositions;
}

/** Identifies a resource in messages: `<kind>/<namespace as written>/<name>`. */
export interface ResourceRef {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** True when `loaded` holds an AuthorizationPolicy. */
export function isAuthorizationPolicy(loaded: LoadedResource): loaded is LoadedResource<AuthorizationPolicy> {
  return loaded.resource.kind === 'AuthorizationPolicy';
}

/** True when `loaded` holds a PeerAuthentication. */
export function isPeerAuthentication(loaded: LoadedResource): loaded is LoadedResource<PeerAuthentication> {
  return loaded.resource.kind === 'PeerAuthentication';
}

/** The `kind/namespace/name` reference of a resource. */
export function resourceRefOf(resource: MeshResource): ResourceRef {
  return { kind: resource.kind, namespace: resource.metadata.namespace, name: resource.metadata.name };
}
