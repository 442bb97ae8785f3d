"""The chat window: sessions sidebar, a virtualised transcript view over a list model, the editor."""
