// Preloaded only when the bench profiles the child (--cpu-prof): the service's own shutdown hook
// re-raises SIGTERM after closing, which kills the process before V8 writes the profile. Exiting
// here first, normally, makes Node write it. Registered before the app's listener, so it runs first.
'use strict';
process.once('SIGTERM', () => process.exit(0));
