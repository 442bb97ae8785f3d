"""Each chat's model. A model chosen in a chat (the picker in its header, `/model NAME`) is kept on the chat's
metadata line, so it survives a restart and never changes another chat; a chat without one answers with
the default model, `model` in config.yaml (set in Settings), and follows it when it changes. Picking a model
is no use of the chat: like a pin or a new name, it leaves the chat where it was in the chat list.

`/model NAME` typed in a chat also leaves a quiet line there, saved with the chat as the app's message (as an
undo's is, desktop/checkpoints/notes.py), so after a restart the chat still says where its model changed."""

from __future__ import annotations

import asyncio

from desktop.session.session import Session, SessionStore

KEY = "model"
NOTICE = "notice"  # the saved line's kind: the app's, not the person's (shown as a notice, not counted as a message)


def chosen_model(session: Session) -> str | None:
    """The model picked for this chat, None when it uses the default."""
    return str(session.metadata.get(KEY) or "") or None


def chat_model(session: Session, default: str) -> str:
    """The model that answers in this chat."""
    return chosen_model(session) or default


async def choose_model(store: SessionStore, session: Session, model: str) -> None:
    """Keep `model` as this chat's model. A chat not yet saved gets it with its first message (its file
    starts with the metadata line), so picking a model never makes an empty chat appear in the list. Raises
    OSError when the chat's file cannot be written; the chat keeps the model it had."""
    before = session.metadata.get(KEY)
    session.metadata[KEY] = model
    try:
        if await asyncio.to_thread(store.path_for(session.key).exists):
            await store.rewrite(session, active=False)  # a pick is no use of the chat: it keeps its place
    except OSError:
        if before is None:
            del session.metadata[KEY]
        else:
            session.metadata[KEY] = before
        raise


async def note_model(store: SessionStore, session: Session, model: str) -> None:
    """Save "Model for this chat: NAME" in the chat. A chat not yet saved gets none: nothing of it is kept yet,
    and the line would make an empty chat appear in the list."""
    if "created_at" in session.metadata:  # set as the chat's file is first written
        await store.append(session, {"role": "user", "kind": NOTICE, "content": f"[Model for this chat: {model}]"})
