import type { Client } from 'minio';

/** S3 allows at most this many parts; with 8 MiB parts that is an object of about 80 GB. */
const MAX_PARTS = 10_000;

/** One multipart upload, its parts sent one at a time. Nothing is visible until complete(). */
export class MultipartUpload {
  private readonly etags: { part: number; etag: string }[] = [];

  private constructor(
    private readonly client: Client,
    private readonly bucket: string,
    readonly key: string,
    private readonly uploadId: string,
  ) {}

  static async start(client: Client, bucket: string, key: string): Promise<MultipartUpload> {
    return new MultipartUpload(client, bucket, key, await client.initiateNewMultipartUpload(bucket, key, {}));
  }

  async add(bytes: Buffer): Promise<void> {
    const part = this.etags.length + 1;
    if (part > MAX_PARTS) throw new Error(`object "${this.key}" needs more than ${MAX_PARTS} parts`);
    const headers = { 'Content-Length': bytes.length };
    const { etag } = await this.client.uploadPart(
      { bucketName: this.bucket, objectName: this.key, uploadID: this.uploadId, partNumber: part, headers },
      bytes,
    );
    this.etags.push({ part, etag });
  }

  async complete(): Promise<void> {
    await this.client.completeMultipartUpload(this.bucket, this.key, this.uploadId, this.etags);
  }

  /** Best effort: an upload left behind is never completed, and MinIO drops stale ones after a day. */
  async abort(): Promise<void> {
    await this.client.abortMultipartUpload(this.bucket, this.key, this.uploadId).catch(() => undefined);
  }
}
