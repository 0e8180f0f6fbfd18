"""A tiny random-weight T5 and a real T5Tokenizer, built offline for the
T5 image's tests (nothing is downloaded)."""
from __future__ import annotations

import io
from pathlib import Path

SENTENCES = [
    "translate English to French: this is a test sentence.",
    "translate English to German: the house is wonderful.",
    "translate English to Romanian: hello world, how are you?",
    "le chat est sur la table",
    "das Haus ist wunderbar",
    "buna ziua lume",
]


def build_tiny_t5(model_dir: Path) -> Path:
    """Tiny random T5 + real T5Tokenizer (sentencepiece-trained vocab), saved with save_pretrained."""
    import sentencepiece as spm
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES * 10),
        model_writer=proto,
        vocab_size=64,
        model_type="unigram",
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=4)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    model_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir
