/** A delegate call the runtime refused, with a reason the model can act on; nothing was started. */
export class DelegationRefusedError extends Error {}
