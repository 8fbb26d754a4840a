// Loads (and so registers) every tensor rewrite. Rewrite modules are leaves: no op module
// imports them, so they may use op classes at load time.
import './shape.js';
import './canonicalize.js';
import './stabilize.js';
import './subtensor-lift.js';
import './specialize.js';
import './conv-direct.js';
import './conv-gemm.js';
import './linalg.js';
import './fusion.js';
import './inplace.js';
import './op-from-graph.js';
import './scan/index.js';
