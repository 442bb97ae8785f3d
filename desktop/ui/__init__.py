"""The Qt layer: adapts the agent core to windows, the tray and notifications."""
