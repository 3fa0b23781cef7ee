/** An upload fetched from the object store onto this instance's disk, ready to be placed. */
export interface LocalUpload {
  readonly name: string;
  readonly stagedPath: string;
}
