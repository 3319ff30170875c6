import { createServices, removeServices } from "./rig.js";

/**
 * The cluster project's PostgreSQL cluster and Redis, made once for the run and removed at its
 * end; each file takes a database of its own in the cluster and an emptied Redis (rig.ts).
 */
export default function setup(): () => void {
  createServices();
  return removeServices;
}
