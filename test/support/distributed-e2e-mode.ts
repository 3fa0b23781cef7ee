// Setup of the `e2e-distributed` jest project: the suites listed there start a distributed
// deployment instead of the all-in-one service (see startHarness), and a test that starts one
// of its own (seven processes) needs more than the e2e tier's 30 s.
process.env.ATS_E2E_MODE = 'distributed';
jest.setTimeout(180_000);
