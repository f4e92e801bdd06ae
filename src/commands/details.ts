// The `details` every manipulation answers, from the snapshot after its event.
import type { Snapshot } from '../store/port.ts';

/** ZITADEL's `details` object, from the snapshot after the event. */
export interface Details {
  sequence: number;
  creationDate: Date | null;
  changeDate: Date;
  resourceOwner: string;
}

export function detailsOf(snapshot: Snapshot<unknown>, withCreationDate: boolean): Details {
  return {
    sequence: snapshot.sequence,
    creationDate: withCreationDate ? snapshot.changeDate : null,
    changeDate: snapshot.changeDate,
    resourceOwner: snapshot.resourceOwner,
  };
}
