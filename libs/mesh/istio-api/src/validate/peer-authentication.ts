/** `ValidatePeerAuthentication`: istiod's webhook checks for a PeerAuthentication. */
import type { PeerAuthentication } from '../model/peer-authentication';
import type { Findings } from './findings';
import { validateWorkloadSelector } from './selector-and-targets';

/** Adds istiod's errors and warnings for `peer` to `findings`. */
export function validatePeerAuthentication(peer: PeerAuthentication, findings: Findings): void {
  const spec = peer.spec;
  const ports = Object.keys(spec.portLevelMtls ?? {});
  const emptySelector = spec.selector === undefined || Object.keys(spec.selector.matchLabels).length === 0;
  if (emptySelector && ports.length > 0) {
    findings.error('PA_PORT_LEVEL_WITHOUT_SELECTOR', 'mesh/namespace peer authentication cannot have port level mTLS', 'spec.portLevelMtls');
  }
  if (spec.portLevelMtls !== undefined && ports.length === 0) {
    findings.error('PA_PORT_LEVEL_EMPTY', 'port level mTLS, if defined, must have at least one element', 'spec.portLevelMtls');
  }
  for (const port of ports) {
    const number = Number(port);
    if (number <= 0 || number > 65535) findings.error('PA_PORT_OUT_OF_RANGE', 'port must be in range 1..65535', `spec.portLevelMtls[${port}]`);
  }
  validateWorkloadSelector(spec.selector, findings);
}
