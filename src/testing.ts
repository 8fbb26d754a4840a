// `weft/testing`: the helpers op authors test with (Theano's "How to test it", PyTensor's
// makeTester): table-driven testers, inferShape and Rop checks, and verifyGrad. They throw a
// CheckError (or the gradient's mismatch) and work under any test runner.
export { makeTester, makeBroadcastTester, type OpTesterSpec, type OpTester, type TesterCase, type FailingCase } from './compile/op-tester.js';
export { checkInferShape, checkRop, CheckError, type CheckRopOptions } from './compile/testing.js';
export { verifyGrad, GradientMismatchError, type VerifyGradOptions } from './compile/verify-grad.js';
