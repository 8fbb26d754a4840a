// onnxruntime-node as a peer: models are built in code (a list of nodes over named float32
// tensors) and encoded with protobufjs from the minimal onnx.proto beside this file, then run in
// sessions with a fixed number of intra-op threads.
import { readFileSync } from 'node:fs';
import type { InferenceSession as OrtSession, Tensor as OrtTensor } from 'onnxruntime-node';
import type * as Protobuf from 'protobufjs';
import type { Runner } from '../lib/suite.js';

type Ort = typeof import('onnxruntime-node');

/** An integer attribute of a node (keepdims, axis). */
export interface OnnxAttribute {
  readonly name: string;
  readonly int: number;
}

export interface OnnxNode {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attributes?: readonly OnnxAttribute[];
}

/** A constant int64 tensor the graph holds (ReduceSum's axes). */
export interface OnnxInitializer {
  readonly name: string;
  readonly dims: readonly number[];
  readonly int64: readonly number[];
}

export interface OnnxGraph {
  readonly name: string;
  /** Graph inputs and outputs: name and static shape (all float32). */
  readonly inputs: ReadonlyArray<{ readonly name: string; readonly shape: readonly number[] }>;
  readonly outputs: ReadonlyArray<{ readonly name: string; readonly shape: readonly number[] }>;
  readonly nodes: readonly OnnxNode[];
  readonly initializers?: readonly OnnxInitializer[];
}

const FLOAT = 1;
const INT64 = 7;
const ATTRIBUTE_INT = 2;
const IR_VERSION = 8;
const OPSET = 17;

export interface OnnxPeer {
  readonly version: string;
  /** A session of `graph` whose kernels use `threads` intra-op threads. */
  session(graph: OnnxGraph, threads: number): Promise<OnnxSession>;
}

export interface OnnxSession {
  /** Runs the model on float32 inputs (in graph order); the first output's data. */
  run(inputs: readonly OrtTensor[]): Promise<Float32Array>;
  tensor(data: Float32Array, shape: readonly number[]): OrtTensor;
  release(): Promise<void>;
}

function valueInfo(v: { name: string; shape: readonly number[] }): object {
  return { name: v.name, type: { tensorType: { elemType: FLOAT, shape: { dim: v.shape.map((d) => ({ dimValue: d })) } } } };
}

function int64Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(BigInt64Array.from(values, (v) => BigInt(v)).buffer);
}

/** The model's bytes. */
export function encodeModel(protobuf: typeof Protobuf, graph: OnnxGraph): Uint8Array {
  const root = protobuf.parse(readFileSync(new URL('./onnx.proto', import.meta.url), 'utf8')).root;
  const Model = root.lookupType('onnx.ModelProto');
  const model = {
    irVersion: IR_VERSION,
    producerName: 'weft-bench',
    opsetImport: [{ domain: '', version: OPSET }],
    graph: {
      name: graph.name,
      node: graph.nodes.map((n, i) => ({
        input: n.inputs,
        output: n.outputs,
        name: `${n.op}_${i}`,
        opType: n.op,
        domain: '',
        attribute: (n.attributes ?? []).map((a) => ({ name: a.name, i: a.int, type: ATTRIBUTE_INT })),
      })),
      initializer: (graph.initializers ?? []).map((t) => ({ name: t.name, dims: t.dims, dataType: INT64, rawData: int64Bytes(t.int64) })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  };
  const problem = Model.verify(model);
  if (problem) throw new Error(`onnx model ${graph.name}: ${problem}`);
  return Model.encode(Model.fromObject(model)).finish();
}

/** Loads onnxruntime-node and protobufjs; rejects with the reason when either cannot run here. */
export async function loadOnnx(): Promise<OnnxPeer> {
  // Both are CommonJS: under ESM their API may sit on `default`.
  const ortModule = (await import('onnxruntime-node')) as Ort & { default?: Ort };
  const ort = ortModule.default ?? ortModule;
  const pbModule = (await import('protobufjs')) as typeof Protobuf & { default?: typeof Protobuf };
  const protobuf = pbModule.default ?? pbModule;
  const version = String(ort.env.versions?.node ?? ort.env.versions?.common ?? 'unknown');
  return {
    version,
    async session(graph, threads) {
      const bytes = encodeModel(protobuf, graph);
      const session: OrtSession = await ort.InferenceSession.create(bytes, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      });
      const names = graph.inputs.map((v) => v.name);
      const out = graph.outputs[0]!.name;
      return {
        async run(inputs) {
          const feeds: Record<string, OrtTensor> = {};
          names.forEach((n, i) => (feeds[n] = inputs[i]!));
          const result = await session.run(feeds);
          return result[out]!.data as Float32Array;
        },
        tensor: (data, shape) => new ort.Tensor('float32', data, [...shape]),
        release: () => session.release(),
      };
    },
  };
}

/**
 * onnxruntime-node on `threads` intra-op threads as a bench row's system, configuration and
 * setup: a session of `graph`, fed `inputs` ([data, shape], in graph order) made into tensors
 * once, as every peer's inputs are resident.
 */
export function onnxRow(graph: OnnxGraph, inputs: ReadonlyArray<readonly [Float32Array, readonly number[]]>, threads: number) {
  return {
    system: 'onnxruntime-node',
    config: `${threads} thread${threads === 1 ? '' : 's'}`,
    setup: async (): Promise<Runner<Float32Array>> => {
      const session = await (await loadOnnx()).session(graph, threads);
      const feeds = inputs.map(([data, shape]) => session.tensor(data, shape));
      return { run: () => session.run(feeds), dispose: () => session.release() };
    },
  };
}
