import { OpenStreams } from './open-streams';

const stream = () => ({ endForShutdown: jest.fn() });

describe('OpenStreams', () => {
  it('ends every open stream once on endAll, but not one that was removed before', () => {
    const streams = new OpenStreams();
    const [a, b, gone] = [stream(), stream(), stream()];
    streams.add(a);
    streams.add(b);
    streams.add(gone)();
    expect(streams.size).toBe(2);
    streams.endAll();
    expect(a.endForShutdown).toHaveBeenCalledTimes(1);
    expect(b.endForShutdown).toHaveBeenCalledTimes(1);
    expect(gone.endForShutdown).not.toHaveBeenCalled();
    expect(streams.size).toBe(0);
  });

  it('ends at once a stream opened after endAll: the server no longer waits for it', () => {
    const streams = new OpenStreams();
    streams.endAll();
    const late = stream();
    streams.add(late);
    expect(late.endForShutdown).toHaveBeenCalledTimes(1);
    expect(streams.size).toBe(0);
  });
});
