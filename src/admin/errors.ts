/** An operator error: bad arguments or an unknown id. The CLI prints it and exits 2. */
export class AdminError extends Error {
  override name = "AdminError";
}
