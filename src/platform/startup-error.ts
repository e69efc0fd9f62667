/**
 * A failure at start that its message explains on its own (what failed, and what to do): the process
 * prints the message as it is, with no stack, and exits 1.
 */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartupError';
  }
}
