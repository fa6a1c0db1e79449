// The leader's broadcast of a new commit index (an empty MsgApp) is not answered by a follower that
// already acknowledged what it covers; every other MsgApp is, so a leader that lost an
// acknowledgement still learns it after one heartbeat.
import { describe, expect, it } from 'vitest';
import { MessageType } from './message';
import type { Message } from './message';
import { entry, msg, newTestRaft, readMessages, storageWithVoters, TestNetwork } from './test/raft-harness';

const n1 = 1n;
const n2 = 2n;
const n3 = 3n;

function appResps(msgs: readonly Message[]): { to: bigint; index: number; reject: boolean }[] {
  return msgs.filter((m) => m.type === MessageType.AppResp).map((m) => ({ to: m.to, index: m.index, reject: m.reject }));
}

describe('commit broadcast', () => {
  it('a follower answers new entries, not the commit index that follows them, and a repeat that moves nothing', () => {
    const r = newTestRaft(n1, 10, 1, storageWithVoters([n1, n2, n3]));
    r.becomeFollower(1, n2);
    r.step(msg(MessageType.App, n2, n1, { term: 1, index: 0, logTerm: 0, entries: [entry(1, 1)], commit: 0 }));
    expect(appResps(readMessages(r))).toEqual([{ to: n2, index: 1, reject: false }]);
    // The broadcast of commit 1: the leader already holds this acknowledgement.
    r.step(msg(MessageType.App, n2, n1, { term: 1, index: 1, logTerm: 1, commit: 1 }));
    expect(r.log.committed).toBe(1);
    expect(appResps(readMessages(r))).toEqual([]);
    // The same empty append again, moving nothing, is answered.
    r.step(msg(MessageType.App, n2, n1, { term: 1, index: 1, logTerm: 1, commit: 1 }));
    expect(appResps(readMessages(r))).toEqual([{ to: n2, index: 1, reject: false }]);
  });

  it('after a heartbeat the next empty append is answered even when it moves the commit index', () => {
    const r = newTestRaft(n1, 10, 1, storageWithVoters([n1, n2, n3]));
    r.becomeFollower(1, n2);
    r.step(msg(MessageType.App, n2, n1, { term: 1, index: 0, logTerm: 0, entries: [entry(1, 1), entry(2, 1)], commit: 0 }));
    readMessages(r);
    r.step(msg(MessageType.Heartbeat, n2, n1, { term: 1, commit: 0 }));
    readMessages(r);
    r.step(msg(MessageType.App, n2, n1, { term: 1, index: 2, logTerm: 1, commit: 2 }));
    expect(r.log.committed).toBe(2);
    expect(appResps(readMessages(r))).toEqual([{ to: n2, index: 2, reject: false }]);
  });

  it('an empty append that moves the commit index is answered unless this term already acknowledged its index', () => {
    const r = newTestRaft(n1, 10, 1, storageWithVoters([n1, n2, n3]));
    r.becomeFollower(1, n2);
    r.step(msg(MessageType.App, n2, n1, { term: 1, index: 0, logTerm: 0, entries: [entry(1, 1), entry(2, 1), entry(3, 1)], commit: 0 }));
    expect(appResps(readMessages(r))).toEqual([{ to: n2, index: 3, reject: false }]);
    // A new leader of term 2 has not heard that acknowledgement.
    r.step(msg(MessageType.App, n3, n1, { term: 2, index: 1, logTerm: 1, commit: 1 }));
    expect(r.log.committed).toBe(1);
    expect(appResps(readMessages(r))).toEqual([{ to: n3, index: 1, reject: false }]);
    // Index 3 was acknowledged in term 1 only: the append that commits up to 2 is answered.
    r.step(msg(MessageType.App, n3, n1, { term: 2, index: 3, logTerm: 1, commit: 2 }));
    expect(r.log.committed).toBe(2);
    expect(appResps(readMessages(r))).toEqual([{ to: n3, index: 3, reject: false }]);
    // Now it was: the broadcast of commit 3 is not.
    r.step(msg(MessageType.App, n3, n1, { term: 2, index: 3, logTerm: 1, commit: 3 }));
    expect(r.log.committed).toBe(3);
    expect(appResps(readMessages(r))).toEqual([]);
  });

  it('in a cluster each follower answers a committed proposal once', () => {
    const net = new TestNetwork(['new', 'new', 'new']);
    net.campaign(n1);
    const answers: Message[] = [];
    net.filter = (m) => {
      if (m.type === MessageType.AppResp) answers.push(m);
      return true;
    };
    net.propose(n1);
    const last = net.raft(n1).log.lastIndex();
    for (const id of [n1, n2, n3]) expect(net.raft(id).log.committed).toBe(last);
    expect(answers.map((m) => `${m.from}:${m.index}`).sort()).toEqual([`2:${last}`, `3:${last}`]);
  });

  it('a leader whose copy of an acknowledgement was lost learns it after one heartbeat, and commits with that follower alone', () => {
    const net = new TestNetwork(['new', 'new', 'new']);
    net.campaign(n1);
    const leader = net.raft(n1);
    // n2's acknowledgement of the next entry is lost; n3's commits it; the broadcast to n2 goes unanswered.
    let lost = 0;
    net.filter = (m) => {
      if (m.type === MessageType.AppResp && m.from === n2 && m.index === leader.log.lastIndex() && lost === 0) {
        lost += 1;
        return false;
      }
      return true;
    };
    net.propose(n1, 'first');
    const first = leader.log.lastIndex();
    expect(lost).toBe(1);
    expect(net.raft(n2).log.committed).toBe(first);
    expect(leader.trk.mustGet(n2).match).toBeLessThan(first);
    // n3 goes away: from now on only n2 can make a quorum with the leader.
    net.filter = undefined;
    net.isolate(n3);
    leader.tick();
    net.send(...readMessages(leader));
    expect(leader.trk.mustGet(n2).match).toBe(first);
    net.propose(n1, 'second');
    expect(leader.log.committed).toBe(first + 1);
    expect(net.raft(n2).log.committed).toBe(first + 1);
  });

  it('a follower whose window is full and whose acknowledgements were all lost is learnt after one heartbeat while the commit index moves', () => {
    const net = new TestNetwork(['new', 'new', 'new'], { maxInflightMessages: 2 });
    net.campaign(n1);
    const leader = net.raft(n1);
    const before = leader.trk.mustGet(n2).match;
    // Every answer of n2 is lost: its window fills with two appends; n3 keeps committing.
    net.filter = (m) => !(m.type === MessageType.AppResp && m.from === n2);
    net.propose(n1, 'a');
    net.propose(n1, 'b');
    const sentToN2 = leader.log.lastIndex();
    net.propose(n1, 'c'); // not sent to n2 (its window is full), committed by n3
    expect(leader.log.committed).toBe(leader.log.lastIndex());
    expect(net.raft(n2).log.lastIndex()).toBe(sentToN2);
    expect(leader.trk.mustGet(n2).match).toBe(before);
    net.filter = undefined;
    net.propose(n1, 'd'); // the commit index moves again; n2 still gets nothing
    // One heartbeat: n2's answer to it brings a MsgApp whose answer the leader receives.
    leader.tick();
    net.send(...readMessages(leader));
    expect(leader.trk.mustGet(n2).match).toBe(leader.log.lastIndex());
    expect(net.raft(n2).log.committed).toBe(leader.log.committed);
  });
});
