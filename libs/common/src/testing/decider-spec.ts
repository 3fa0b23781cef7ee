/**
 * Given/when/then for pure deciders:
 * `spec.given(events).when(command).then(expectedEvents)` or `.thenThrows(ErrorClass)`.
 */
export interface DeciderUnderTest<State, Command, Event> {
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

export const DeciderSpecification = {
  for<State, Command, Event>(decider: DeciderUnderTest<State, Command, Event>) {
    return {
      given(events: Event[]) {
        return {
          when(command: Command) {
            const run = () => decider.decide(command, events.reduce(decider.evolve, decider.initialState()));
            return {
              then(expected: Event[]): void {
                expect(run()).toEqual(expected);
              },
              thenNothing(): void {
                expect(run()).toEqual([]);
              },
              thenThrows(errorClass: new (...args: never[]) => Error, message?: RegExp): void {
                let thrown: unknown;
                try {
                  run();
                } catch (error) {
                  thrown = error;
                }
                expect(thrown).toBeInstanceOf(errorClass);
                if (message) expect((thrown as Error).message).toMatch(message);
              },
              /** The events, for assertions that need more than equality. */
              events: run,
            };
          },
        };
      },
    };
  },
};
