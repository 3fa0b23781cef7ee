import { NoHandlerError } from './bus.port';
import { InProcessBus } from './in-process/in-process-bus';
import { NamespacedBus } from './namespaced-bus';

describe('NamespacedBus', () => {
  it('keeps two deployments on one bus apart: commands and facts stay in their namespace', async () => {
    const shared = new InProcessBus();
    const staging = new NamespacedBus(shared, 'staging');
    const prod = new NamespacedBus(shared, 'prod');
    staging.handle('sandbox.command.run', async () => 'staging ran it');
    const heard: string[] = [];
    prod.subscribe('task.event.appended', (p: string) => heard.push(`prod:${p}`));
    staging.subscribe('task.event.appended', (p: string) => heard.push(`staging:${p}`));

    await expect(staging.request('sandbox.command.run', {})).resolves.toBe('staging ran it');
    await expect(prod.request('sandbox.command.run', {})).rejects.toBeInstanceOf(NoHandlerError);
    await expect(shared.request('staging.sandbox.command.run', {})).resolves.toBe('staging ran it');
    staging.publish('task.event.appended', 'x');
    await new Promise((resolve) => setTimeout(resolve, 10)); // facts are delivered asynchronously
    expect(heard).toEqual(['staging:x']);
  });

  it('refuses a namespace that would change the subject grammar', () => {
    expect(() => new NamespacedBus(new InProcessBus(), 'a.*')).toThrow('invalid bus namespace');
    expect(() => new NamespacedBus(new InProcessBus(), '')).toThrow('invalid bus namespace');
  });
});
