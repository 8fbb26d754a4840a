// The small region layout that tests playing the region protocol by hand give their plans: the
// header, two members' records, then the pending counts and both ready queues.
import { HEADER_BYTES } from '../../src/workers/region.js';

export const SMALL_LAYOUT = {
  regionBytes: 512,
  memberOffset: HEADER_BYTES,
  memberSlots: 2,
  pendingOffset: 96,
  queueOffset: 128,
  mainQueueOffset: 160,
} as const;
