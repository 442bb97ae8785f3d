"""A question of the person's, edited in the chat's message box: what Edit set aside (the message being written,
given back when the edit ends), whether sending makes a branch, and the edits of chats left mid-edit (taken up
again on coming back). Kept apart from the window so that no rewritten word is lost whichever way the edit ends:
sent, cancelled, its chat left, read again, deleted or emptied by /new, the app closed (`unsent` is what the
draft file keeps). A chat left mid-edit and then deleted takes its edit with it, after the delete question quoted
the rewritten words (`rewritten`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from desktop.conversation.transcript import ChatRow, attachment_names
from desktop.ui.chat.composer import Composer, Draft


@dataclass(frozen=True)
class _Aside:
    """A question being edited in a chat that was left: taken up again, as it was, when the chat is opened."""

    row: ChatRow | None  # None: the question is no longer in the chat (see `say_gone`)
    branches: bool  # sending it makes a branch (it was an earlier question)
    draft: Draft  # the rewritten text and its files


class Editing:
    """The edit in the message box (`row`, None when there is none) and the ones set aside, per chat."""

    def __init__(self, composer: Composer) -> None:
        self.composer = composer
        self.row: ChatRow | None = None
        self.branches = False  # sending the edited question makes a branch (it was an earlier one)
        self._draft: Draft | None = None  # what was being written when Edit filled the box, given back after
        self._aside: dict[str, _Aside] = {}

    def start(self, row: ChatRow, branches: bool) -> None:
        """Put `row`'s words and files in the box, what was being written set aside (not replaced)."""
        if self._draft is None:
            self._draft = self.composer.take_draft()
        self.composer.input.setPlainText(row.text)
        self.composer.clear_attachments()
        self.composer.add_files(list(row.media), attachment_names(row))
        self.row, self.branches = row, branches
        self.say()

    def say(self) -> None:
        """The hint line says what Enter does with the question being edited, and keeps saying it until the edit
        stops (the composer's `standing`)."""
        self.composer.standing = ("Editing an earlier message: Enter sends it in a new branch, this chat stays as it "
                                  "is · Esc cancels" if self.branches else
                                  "Editing your last message: Enter sends it in its place · Esc cancels")
        self.composer.show_keys()

    def stop(self) -> None:
        self.row = None
        self.branches = False
        self.composer.standing = ""
        self.composer.show_keys()

    def cancel(self) -> None:
        """Esc: the edited copy goes, the question stays as it was, what was being written comes back."""
        self.stop()
        self.composer.take_draft()
        self.give_back_draft()

    def give_back_draft(self) -> None:
        """The edit is over (sent, cancelled, or its chat left): the message that was being written comes back,
        before anything typed in the box meanwhile (an edit sent in a branch is over only once the branch is
        written, and the person may have gone on typing, in that chat or another)."""
        draft, self._draft = self._draft, None
        if draft is not None:
            self.composer.put_back(_joined(draft, self.composer.take_draft()))

    def give_back_kept(self, text: str) -> None:
        """The message that was being written when the app last ended, unless something is in the box already."""
        if self._draft is None and not self.composer.input.toPlainText():
            self.composer.input.setPlainText(text)
            self.composer.input.moveCursor(self.composer.input.textCursor().MoveOperation.End)

    def set_aside(self, key: str, known: bool) -> None:
        """The chat `key` is left mid-edit: the edit (with its rewritten text and files) is kept for when it is
        opened again (`known`: the chat is still there), and what was being written before Edit comes back."""
        if self.row is None:
            return
        if known:
            self._aside[key] = _Aside(self.row, self.branches, self.composer.take_draft())
        self.stop()
        self.give_back_draft()

    def keep_aside(self, key: str, row: ChatRow, draft: Draft) -> None:
        """An edited question sent from the chat `key` came back (its branch could not be written) after the person
        went to another chat: it waits in its own chat, taken up again when that is opened, never put into the
        chat on screen; what was being written before Edit comes back to the box, unless an edit holds it now."""
        self._aside[key] = _Aside(row, True, draft)
        if self.row is None:
            self.give_back_draft()

    def take_up(self, key: str) -> None:
        """Back in a chat left mid-edit: the edit goes on as it was left, what is in the box set aside again. While
        an edit sent in a branch is still being saved (or the words of one gone are in the box), what was being
        written before it is held already: the box's words are kept after it, neither replacing the other."""
        edit = self._aside.pop(key, None)
        if edit is None:
            return
        box = self.composer.take_draft()
        self._draft = box if self._draft is None else _joined(self._draft, box)
        self.composer.put_back(edit.draft)
        if edit.row is None:
            self.say_gone()
            return
        self.row, self.branches = edit.row, edit.branches
        self.say()

    def rewritten(self, key: str) -> str:
        """The words rewritten for a question of the chat `key`, left mid-edit and not sent ("" if none, or if they
        are the question's as it was): they go if that chat is deleted, so the delete question names them."""
        edit = self._aside.get(key)
        return edit.draft.text if edit is not None and _changed(edit.row, edit.draft.text) else ""

    def aside_row(self, key: str) -> ChatRow | None:
        edit = self._aside.get(key)
        return edit.row if edit is not None else None

    def find_again(self, key: str, rows: Sequence[ChatRow], old: ChatRow, place: int) -> None:
        """The chat was read again, its rows made anew: the question edited there is the one with its words nearest
        its place (the chat as read may order its rows otherwise: a message sent into a running turn shows where it
        was sent, the file has it where the turn took it in). One not found (the file changed) is gone: its
        rewritten words stay, as a message to send."""
        found = nearest(rows, old, place)
        edit = self._aside.get(key)
        if edit is not None and edit.row is old:
            self._aside[key] = replace(edit, row=found)
        elif self.row is old and found is not None:
            self.row = found
        elif self.row is old:
            self.stop()
            self.say_gone()

    def say_gone(self) -> None:
        """The question being edited is no longer in its chat: the box keeps the rewritten words, which are not an
        edit any more; what was being written before Edit comes back once they are sent."""
        self.composer.say("The message you were editing is no longer in its chat: Enter sends your rewritten "
                          "words as a new message")

    def chat_deleted(self, key: str, current: bool) -> bool:
        """The chat `key` was deleted: an edit set aside there goes with it (the delete question quoted its words);
        in the open chat (`current`), words rewritten for its question stay in the box (True: say so once the next
        chat is shown)."""
        self._aside.pop(key, None)
        if not current or self.row is None or self.composer.input.toPlainText().strip() == self.row.text.strip():
            return False
        self.stop()
        return True

    def history_gone(self, key: str, current: bool) -> None:
        """/new moved the chat's history under another key: a question edited in it is gone from it."""
        if (edit := self._aside.get(key)) is not None:
            self._aside[key] = replace(edit, row=None)
        if current and self.row is not None:
            self.stop()
            self.say_gone()

    def turn_began(self, key: str, current: bool) -> None:
        """A turn begins in the chat `key` while a question there is edited: the chat moved on (the message may have
        come from elsewhere), so the question is sent in a branch, the chat as it is."""
        if (edit := self._aside.get(key)) is not None:
            self._aside[key] = replace(edit, branches=True)
        if current and self.row is not None:
            self.branches = True

    def unsent(self) -> str:
        """The message being written, kept on disk: the one set aside while a question is edited in the box, then
        each question rewritten and not yet sent (in this chat or one left mid-edit), after a blank line. Edits are
        taken up again in this run only; after a restart their words are in the box, never lost."""
        box = self.composer.input.toPlainText()
        edits = [(edit.row, edit.draft.text) for edit in self._aside.values()]
        if self._draft is not None:  # the box holds a question being edited, or the words of one gone
            edits.append((self.row, box))
        rewritten = [text for row, text in edits if _changed(row, text)]
        return "\n\n".join(filter(None, (self._draft.text if self._draft is not None else box, *rewritten)))


def _joined(first: Draft, then: Draft) -> Draft:
    """Two messages being written, as one: `then`'s words after a blank line, its files after `first`'s."""
    return Draft("\n\n".join(filter(None, (first.text, then.text))),
                 first.files + [path for path in then.files if path not in first.files],
                 {**then.sent_as, **first.sent_as}, {**then.pasted_texts, **first.pasted_texts})


def _changed(row: ChatRow | None, text: str) -> bool:
    """Whether `text`, written for the question `row` (None: one gone), holds words of the person's not in it."""
    return bool(text.strip()) and (row is None or text.strip() != row.text.strip())


def nearest(rows: Sequence[ChatRow], row: ChatRow, place: int) -> ChatRow | None:
    """The row of `rows` (a chat as read from its file) showing what `row` (shown at `place`) shows, nearest that
    place: the chat as read may order its rows otherwise (a message sent into a running turn shows live where it
    was sent, the file has it where the turn took it in)."""
    same = [i for i, other in enumerate(rows) if other.kind is row.kind and other.text == row.text]
    return rows[min(same, key=lambda i: abs(i - place))] if same else None
