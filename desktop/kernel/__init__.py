"""The kernel: the contract every part speaks (the bus and its turn events) and the plumbing they all use
(atomic files, the app's folders, background coroutines, logs, secrets, local times). Plain asyncio and the
standard library: it imports nothing else of `desktop` at run time, so any part may import it without
pulling in another."""
