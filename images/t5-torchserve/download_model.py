"""Build-time step: fetch T5 and write it with save_pretrained.

Used by the Dockerfile's first stage; the output directory is packed into
t5-small.mar by torch-model-archiver.  ``--model-id`` may also be a local
directory (that is how the tests exercise it, offline).

    python download_model.py --model-id google-t5/t5-small --revision <sha> --output /build/t5-small
"""

from __future__ import annotations

import argparse
import os
import sys


def save_model(model_id: str, output: str, revision: str | None = None) -> list:
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    kwargs = {"revision": revision} if revision else {}
    tokenizer = AutoTokenizer.from_pretrained(model_id, **kwargs)
    model = T5ForConditionalGeneration.from_pretrained(model_id, **kwargs)
    os.makedirs(output, exist_ok=True)
    tokenizer.save_pretrained(output)
    model.save_pretrained(output)
    return sorted(os.listdir(output))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-id", default="google-t5/t5-small")
    parser.add_argument("--revision", default=None, help="hub revision (commit sha, tag or branch)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    files = save_model(args.model_id, args.output, args.revision)
    print(f"saved {args.model_id} to {args.output}: {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
