// The scan rewrites in the database, where PyTensor has them: scan_eqopt1 (before canonicalize:
// moving loop-invariant work, element-wise work and products out of steps, to a fixed point), scan_eqopt2 (after
// stabilize: merging loops, their inputs and outputs, dropping what became unused) and ScanSaveMem once after
// it; ScanInplaceOptimizer in the inplace phase. All are tagged 'fast_run' and 'scan', so
// `Mode({ excluding: ['scan'] })` turns them off.
import { EquilibriumDB } from '../../../graph/rewriting/db.js';
import { inplaceDB, optdb } from '../../../graph/rewriting/optdb.js';
import { in2out } from '../../../graph/rewriting/walk.js';
import { scanMerge } from './merge.js';
import { scanMergeInouts } from './merge-inouts.js';
import { pushOutNonSeqScan, pushOutSeqScan } from './push-out.js';
import { pushOutDot1 } from './push-out-dot1.js';
import { pushOutScanOutput } from './push-out-output.js';
import { removeConstantsAndUnusedInputsScan } from './remove-unused.js';
import { scanSaveMem } from './save-mem.js';
import { scanInplaceOptimizer } from './inplace.js';

export const scanEqopt1 = new EquilibriumDB('scan_eqopt1');
export const scanEqopt2 = new EquilibriumDB('scan_eqopt2');

const SCAN = ['fast_run', 'scan'];

optdb.register('scan_eqopt1', scanEqopt1, { tags: SCAN, position: 0.05 });
optdb.register('scan_eqopt2', scanEqopt2, { tags: SCAN, position: 1.6 });

scanEqopt1.register('remove_constants_and_unused_inputs_scan', removeConstantsAndUnusedInputsScan, { tags: [...SCAN, 'scan_remove_unused'] });
scanEqopt1.register('PushOutNonSeqScan', pushOutNonSeqScan, { tags: [...SCAN, 'scan_pushout', 'scan_push_out_non_seq'] });
scanEqopt1.register('PushOutSeqScan', pushOutSeqScan, { tags: [...SCAN, 'scan_pushout', 'scan_push_out_seq'] });
// These two trade memory for fewer, larger products (PyTensor tags them 'more_mem'): a value the
// step computes may become a stacked output so that its product can leave the loop.
scanEqopt1.register('PushOutDot1', pushOutDot1, { tags: [...SCAN, 'scan_pushout', 'scan_pushout_dot1', 'more_mem'] });
scanEqopt1.register('PushOutScanOutput', pushOutScanOutput, { tags: [...SCAN, 'scan_pushout', 'scan_pushout_output', 'more_mem'] });

scanEqopt2.register('remove_constants_and_unused_inputs_scan', removeConstantsAndUnusedInputsScan, { tags: [...SCAN, 'scan_remove_unused'] });
scanEqopt2.register('ScanMerge', scanMerge, { tags: [...SCAN, 'scan_merge'] });
scanEqopt2.register('scan_merge_inouts', scanMergeInouts, { tags: SCAN });

// Once, after the loops' shapes are final: which rows the readers need is known then.
optdb.register('ScanSaveMem', in2out('ScanSaveMem', scanSaveMem), { tags: [...SCAN, 'scan_save_mem'], position: 1.61 });

// In the inplace phase, as PyTensor's scan_inplace: the loop reads and writes its rows in place.
inplaceDB.register('ScanInplaceOptimizer', in2out('ScanInplaceOptimizer', scanInplaceOptimizer), { tags: [...SCAN, 'inplace', 'scan_inplace'], position: 4 });
