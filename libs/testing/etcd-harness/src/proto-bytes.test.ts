import { describe, expect, it } from 'vitest';
import { etcdMessageType } from '@ward/etcd/proto';
import { lengthDelimited, nestedTxnBytes } from './proto-bytes';

describe('nestedTxnBytes', () => {
  it('decodes as the nested txn it claims to be', () => {
    const decoded = etcdMessageType('etcdserverpb.TxnRequest').toObject(etcdMessageType('etcdserverpb.TxnRequest').decode(nestedTxnBytes(2, 'k', 'v')), { bytes: String }) as {
      success: { request_txn?: { success: { request_txn?: { success: { request_put: { key: string } }[] } }[] } }[];
    };
    const innermost = decoded.success[0]?.request_txn?.success[0]?.request_txn?.success[0]?.request_put;
    expect(innermost?.key).toBe(Buffer.from('k').toString('base64'));
  });

  it('nests exactly like repeated wrapping', () => {
    let wrapped = nestedTxnBytes(0, 'k', 'v');
    for (let level = 0; level < 300; level++) wrapped = lengthDelimited(2, lengthDelimited(4, wrapped));
    expect(Buffer.from(nestedTxnBytes(300, 'k', 'v')).equals(Buffer.from(wrapped))).toBe(true);
  });

  it('builds very deep messages without recursion', () => {
    expect(nestedTxnBytes(100_000, 'k', 'v').length).toBeGreaterThan(400_000);
  });
});
