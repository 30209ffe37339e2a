/** Glue between async adapters and grpc-js callbacks: every failure goes through the one error mapping. */
import type { handleUnaryCall, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import type { ContainerApi } from '../../../shared/domain/container';
import type { Engine } from '../../engine/api';
import { toGrpcStatus } from '../errors';

/**
 * What the CRI server needs from the engine (the real Engine or a test double). Contract the server relies on:
 * status/stop/remove take a full id or a unique prefix; an ambiguous prefix is InvalidArgument; stop/remove of an
 * unknown id succeed (NotFound is tolerated too); status of an unknown id is NotFound.
 */
export type CriEngine = Pick<
  Engine,
  'run' | 'stop' | 'remove' | 'status' | 'list' | 'cniConfig' | 'runtimeConditions' | 'info' | 'subscribe' | 'images' | keyof ContainerApi
>;

export function unary<Req, Res>(fn: (req: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    fn(call.request, call).then(
      (res) => callback(null, res),
      (e: unknown) => callback(toGrpcStatus(e)),
    );
  };
}
