"""The context budget's token bound never counts fewer tokens than the real tokenizers, and not wildly more."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from desktop.providers.token_bound import IMAGE_PART, messages_bound, text_bound
from desktop.providers.tokens import encoding_for

SAMPLES = {
    "english": "The meeting moved to Thursday afternoon; please bring the quarterly figures and the draft "
               "of the announcement so we can agree on the wording before it goes out to everyone.\n" * 4,
    "code": "async def fetch(session, url: str) -> dict[str, int]:\n    async with session.get(url) as reply:\n"
            "        reply.raise_for_status()\n        return {k: len(v) for k, v in (await reply.json()).items()}\n" * 3,
    "json": json.dumps([{"id": f"call_{i}", "function": {"name": "read_file", "arguments": json.dumps(
        {"path": f"notes/2024-0{i}-report.md", "limit": 200})}} for i in range(1, 6)]),
    "croatian": "Pokrenite naredbu s odgovarajućim ovlastima i provjerite datoteke prije nego što ih premjestite "
                "u drugu mapu na poslužitelju.\n" * 3,
    "german": "Die Datenschutzgrundverordnung verlangt eine Verarbeitungsübersicht; Zuständigkeitsbereiche "
              "und Aufbewahrungsfristen müssen schriftlich festgehalten werden.\n" * 3,
    "russian": "Пожалуйста, проверьте настройки подключения и перезапустите приложение, если ошибка "
               "повторится снова завтра утром.\n" * 3,
    "chinese": "请在明天上午之前把会议记录整理好，并发送给所有参加讨论的同事，谢谢大家的配合。\n" * 3,
    "japanese": "明日の午前中までに議事録をまとめて、参加したメンバー全員に送ってください。よろしくお願いします。\n" * 3,
    "korean": "내일 오전까지 회의록을 정리해서 참석한 모든 분께 보내 주세요. 감사합니다.\n" * 3,
    "hex": "\n".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(20)),
    "base64": base64.b64encode(hashlib.sha512(b"seed").digest() * 12).decode(),
    "emoji": "Done ✅ shipped 🚀 thanks 🙏 see you 👋\n" * 5,
}


# cl100k_base (what the estimate used for every model OpenAI does not name) and o200k_base, which needs fewer
# tokens outside English: the bound is sized for the former, so it is looser for the latter
@pytest.mark.parametrize(("model", "loosest"), [("openai/test", 1.85), ("openai/gpt-4o", 3.0)])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_bound_is_never_below_the_tokenizer_and_not_far_above(name: str, model: str, loosest: float) -> None:
    text = SAMPLES[name]
    real = len(encoding_for(model).encode(text, disallowed_special=()))
    assert real <= text_bound(text) <= loosest * real


def test_a_message_list_counts_each_message_its_parts_and_tool_calls() -> None:
    calls = [{"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": '{"command": "ls"}'}}]
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        {"role": "assistant", "content": None, "tool_calls": calls},
    ]
    total = messages_bound(messages)
    texts = text_bound("You are helpful.") + text_bound("What is in this picture?") + text_bound(json.dumps(calls))
    assert total > texts + IMAGE_PART
    assert messages_bound(messages[:1]) < total
