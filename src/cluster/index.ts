// weft.cluster: calls spread over processes and machines through a BullMQ queue on Redis.
// `serve` runs calls in this process (as `weft worker` does); `connect` makes a remote function.
export { serve, type ServeOptions, type ClusterServer, type ServerStats } from './serve.js';
export { connect, type ConnectOptions, type RemoteFunction, type MapOptions } from './connect.js';
export { MAX_FRAME_BYTES } from './wire.js';
export type { Connection } from './connection.js';
