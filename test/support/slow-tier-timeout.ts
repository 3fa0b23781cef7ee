// Int and e2e specs start real servers (and, on a cold ts-jest cache, compile the whole service
// first), which jest's 5 s default cannot cover. Specs that need more still set their own.
jest.setTimeout(30_000);
