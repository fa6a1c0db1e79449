// CI: 100 seeds x 5,000 ticks of the Figure 8 profile (3 nodes, leaders dying mid-replication).
import { FIGURE8_PROFILE } from './profile';
import { describeSeedRun } from './test/ci-seeds';

// Leaders die too often for many client operations to complete; the point is the log.
describeSeedRun(FIGURE8_PROFILE, 1, 100, { opsPerSeed: 3, crashesPerSeed: 30 });
