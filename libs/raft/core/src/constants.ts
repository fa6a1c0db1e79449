import { utf8 } from '@ward/shared/bytes';

/** Context of a vote request that a leader transfer forces (etcd's value, kept for parity). */
export const CAMPAIGN_TRANSFER_CONTEXT = utf8('CampaignTransfer');

/** Bound on queued ReadIndex requests and undelivered ReadStates; beyond it requests are dropped. */
export const MAX_DEFERRED_READS = 65_536;
