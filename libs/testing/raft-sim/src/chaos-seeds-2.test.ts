import { describeChaosSlice } from './test/ci-seeds';

describeChaosSlice(1);
