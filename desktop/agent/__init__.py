"""The agent core: context, runner and loop. Plain asyncio; never imports Qt."""
