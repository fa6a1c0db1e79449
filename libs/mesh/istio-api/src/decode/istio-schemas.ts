/** The Istio security protos (`istio.security.v1beta1`, `istio.type.v1beta1`) as decode schemas. */
import { AUTHORIZATION_POLICY_ACTIONS } from '../model/authorization-policy';
import { MUTUAL_TLS_MODES } from '../model/peer-authentication';
import { field } from './message-schema';
import type { FieldSchema, MessageSchema } from './message-schema';

const STRING = { type: 'string' } as const;
const STRINGS = { type: 'string-list' } as const;

export const WORKLOAD_SELECTOR_SCHEMA: MessageSchema = {
  fullName: 'istio.type.v1beta1.WorkloadSelector',
  fields: [field('matchLabels', { type: 'string-map' }, true)],
};

export const POLICY_TARGET_REFERENCE_SCHEMA: MessageSchema = {
  fullName: 'istio.type.v1beta1.PolicyTargetReference',
  fields: [field('group', STRING, true), field('kind', STRING, true), field('name', STRING, true), field('namespace', STRING, true)],
};

const SOURCE_FIELD_NAMES = [
  'principals', 'notPrincipals', 'requestPrincipals', 'notRequestPrincipals', 'namespaces', 'notNamespaces',
  'serviceAccounts', 'notServiceAccounts', 'ipBlocks', 'notIpBlocks', 'remoteIpBlocks', 'notRemoteIpBlocks',
  'trustDomains', 'notTrustDomains',
] as const;

const OPERATION_FIELD_NAMES = ['hosts', 'notHosts', 'ports', 'notPorts', 'methods', 'notMethods', 'paths', 'notPaths'] as const;

export const SOURCE_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.Source',
  fields: SOURCE_FIELD_NAMES.map((name): FieldSchema => field(name, STRINGS)),
};

export const OPERATION_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.Operation',
  fields: OPERATION_FIELD_NAMES.map((name): FieldSchema => field(name, STRINGS)),
};

export const CONDITION_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.Condition',
  fields: [field('key', STRING, true), field('values', STRINGS), field('notValues', STRINGS)],
};

export const RULE_FROM_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.Rule.From',
  fields: [field('source', { type: 'message', message: () => SOURCE_SCHEMA })],
};

export const RULE_TO_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.Rule.To',
  fields: [field('operation', { type: 'message', message: () => OPERATION_SCHEMA })],
};

export const RULE_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.Rule',
  fields: [
    field('from', { type: 'message-list', message: () => RULE_FROM_SCHEMA }),
    field('to', { type: 'message-list', message: () => RULE_TO_SCHEMA }),
    field('when', { type: 'message-list', message: () => CONDITION_SCHEMA }),
  ],
};

export const EXTENSION_PROVIDER_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.AuthorizationPolicy.ExtensionProvider',
  fields: [field('name', STRING, true)],
};

export const AUTHORIZATION_POLICY_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.AuthorizationPolicy',
  fields: [
    field('selector', { type: 'message', message: () => WORKLOAD_SELECTOR_SCHEMA }),
    // The proto names these two fields in camelCase already.
    { jsonName: 'targetRef', protoName: 'targetRef', fieldType: { type: 'message', message: () => POLICY_TARGET_REFERENCE_SCHEMA } },
    { jsonName: 'targetRefs', protoName: 'targetRefs', fieldType: { type: 'message-list', message: () => POLICY_TARGET_REFERENCE_SCHEMA } },
    field('rules', { type: 'message-list', message: () => RULE_SCHEMA }),
    field('action', { type: 'enum', enumName: 'istio.security.v1beta1.AuthorizationPolicy.Action', values: AUTHORIZATION_POLICY_ACTIONS }, true),
    field('provider', { type: 'message', message: () => EXTENSION_PROVIDER_SCHEMA }),
  ],
};

export const MUTUAL_TLS_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.PeerAuthentication.MutualTLS',
  fields: [field('mode', { type: 'enum', enumName: 'istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode', values: MUTUAL_TLS_MODES }, true)],
};

export const PEER_AUTHENTICATION_SCHEMA: MessageSchema = {
  fullName: 'istio.security.v1beta1.PeerAuthentication',
  fields: [
    field('selector', { type: 'message', message: () => WORKLOAD_SELECTOR_SCHEMA }),
    field('mtls', { type: 'message', message: () => MUTUAL_TLS_SCHEMA }),
    field('portLevelMtls', { type: 'uint32-map', message: () => MUTUAL_TLS_SCHEMA }),
  ],
};
