"""Builds .eml files with the trace headers Gmail (mx.google.com) really adds.

Written for evals/reading/ without reading inboxflow's code: it only knows what a
mail looks like when it lands in a Google Workspace mailbox (brightlane.io),
directly, through Gmail's automatic forwarding (+caf_ Return-Path, X-Forwarded-For,
X-Forwarded-To, an ARC chain i=1..2) or as a manual forward typed by a mail client.
"""

from __future__ import annotations

import base64
import hashlib
import random
import textwrap
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, parsedate_to_datetime
from datetime import datetime, timedelta, timezone

PST = timezone(timedelta(hours=-8))


def _rng(seed: str) -> random.Random:
    return random.Random(hashlib.sha256(seed.encode()).digest())


def _b64(r: random.Random, n: int) -> str:
    return base64.b64encode(bytes(r.getrandbits(8) for _ in range(n))).decode()


def _fold_b64(s: str, indent: str = "         ") -> str:
    parts = [s[i:i + 70] for i in range(0, len(s), 70)]
    return ("\r\n" + indent).join(parts)


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _msgid_for(r: random.Random, addr: str, client: str) -> str:
    dom = addr.rsplit("@", 1)[1].lower()
    if client == "apple":
        u = _hex(r, 32).upper()
        return f"<{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}@{dom}>"
    if client == "crisp":
        return f"<{_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 12)}@relay.crisp.email>"
    if dom in ("gmail.com", "googlemail.com") or PROVIDERS.get(dom, {}).get("sor"):
        return _gmail_msgid(r)
    if dom in ("outlook.com", "hotmail.com") or client == "outlook":
        box = "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(4))
        return f"<AM9P{box}MB{r.randint(1000, 9999)}{_hex(r, 20).upper()}@AM9P{box}MB{r.randint(1000, 9999)}.EURP195.PROD.OUTLOOK.COM>"
    if dom == "yahoo.com":
        return f"<{r.randint(10**8, 10**9)}.{r.randint(10**6, 10**7)}.{r.randint(10**12, 10**13)}@mail.yahoo.com>"
    if dom in ("seznam.cz", "email.cz"):
        return f"<{_hex(r, 4)}.{_hex(r, 8)}.{_hex(r, 16)}@email.seznam.cz>"
    return f"<{_hex(r, 16)}.{r.randint(1000, 99999)}@{dom}>"


def _gmail_msgid(r: random.Random) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+_-="
    return "<CA" + "".join(r.choice(alphabet) for _ in range(54)) + "@mail.gmail.com>"


# Sending providers: what the receiving mx.google.com sees of them.
PROVIDERS = {
    "gmail.com": dict(host="mail-sor-f41.google.com", ip="209.85.220.41", selector="20230601", sor=True),
    "googlemail.com": dict(host="mail-sor-f69.google.com", ip="209.85.220.69", selector="20230601", sor=True),
    "seznam.cz": dict(host="mxd.seznam.cz", ip="77.75.78.210", selector="szn20221014"),
    "email.cz": dict(host="mxe.seznam.cz", ip="77.75.76.48", selector="szn20221014"),
    "centrum.sk": dict(host="mail.centrum.sk", ip="46.255.227.246", selector="default"),
    "azet.sk": dict(host="smtp-out.azet.sk", ip="91.235.53.36", selector="azet"),
    "outlook.com": dict(host="mail-am6eur05olkn2010.outbound.protection.outlook.com", ip="40.92.91.10", selector="selector1"),
    "hotmail.com": dict(host="mail-db5eur03olkn2014.outbound.protection.outlook.com", ip="40.92.58.14", selector="selector1"),
    "yahoo.com": dict(host="sonic311-21.consmr.mail.ne1.yahoo.com", ip="66.163.191.148", selector="s2048"),
    "icloud.com": dict(host="st43p00im-ztdg10073201.me.com", ip="17.58.63.173", selector="1a1hai"),
    "web.de": dict(host="mout.web.de", ip="212.227.15.14", selector="s29768273"),
    "gmx.de": dict(host="mout.gmx.net", ip="212.227.17.22", selector="s31663417"),
    "wp.pl": dict(host="mx.wp.pl", ip="212.77.101.4", selector="1024a"),
    "freemail.hu": dict(host="smtp-out.freemail.hu", ip="195.228.245.58", selector="freemail"),
    "ziggo.nl": dict(host="smtpq4.tb.ukmail.iss.as9143.net", ip="212.54.57.99", selector="20230406"),
    "comcast.net": dict(host="resqmta-h2p-567890.sys.comcast.net", ip="96.102.200.4", selector="20190202a"),
    "dostupnost-leku.cz": dict(host="mail-sor-f73.google.com", ip="209.85.220.73", selector="google", sor=True),
    "crisp": dict(host="mail.relay.crisp.email", ip="159.69.78.211", selector="crisp"),
}


def _provider(addr: str) -> dict:
    dom = addr.rsplit("@", 1)[1].lower()
    return PROVIDERS.get(dom, dict(host=f"mail.{dom}", ip="185.70.40.17", selector="default"))


def _auth_results(r: random.Random, addr: str, mailfrom: str, selector: str, ip: str,
                  arc: str | None = None, label: str = "Authentication-Results",
                  prefix: str = "", dmarc_policy: str = "p=NONE sp=QUARANTINE dis=NONE") -> str:
    dom = addr.rsplit("@", 1)[1].lower()
    hb = _b64(r, 6)[:8]
    lines = [f"{label}: {prefix}mx.google.com;",
             f"       dkim=pass header.i=@{dom} header.s={selector} header.b={hb};"]
    if arc:
        lines.append(f"       arc=pass ({arc});")
    mf = '"' + mailfrom + '"' if "+" in mailfrom else mailfrom
    lines.append(f"       spf=pass (google.com: domain of {mailfrom} designates {ip} as permitted sender) "
                 f"smtp.mailfrom={mf};")
    lines.append(f"       dmarc=pass ({dmarc_policy}) header.from={dom}")
    return "\r\n".join(lines)


def _arc_set(r: random.Random, i: int, cv: str, auth_body: str, ts: int) -> str:
    seal = (f"ARC-Seal: i={i}; a=rsa-sha256; t={ts}; cv={cv};\r\n        d=google.com; s=arc-20240605;\r\n"
            f"        b={_fold_b64(_b64(r, 256), '         ')}")
    hdrs = "to:subject:message-id:date:from:mime-version:dkim-signature"
    if i > 1:
        hdrs += ":delivered-to"
    sig = (f"ARC-Message-Signature: i={i}; a=rsa-sha256; c=relaxed/relaxed; d=google.com; s=arc-20240605;\r\n"
           f"        h={hdrs};\r\n        bh={_b64(r, 32)};\r\n        fh={_b64(r, 32)};\r\n"
           f"        b={_fold_b64(_b64(r, 256), '         ')}")
    aar = f"ARC-Authentication-Results: i={i}; " + auth_body.split(": ", 1)[1]
    return "\r\n".join([seal, sig, aar])


def _received_by_google(r: random.Random, rcpt: str, when: datetime) -> str:
    w = format_datetime(when.astimezone(PST))
    return (f"Received: by 2002:a05:{_hex(r, 4)}:{_hex(r, 3)}:b0:{_hex(r, 3)}:{_hex(r, 4)}:{_hex(r, 4)} "
            f"with SMTP id {_hex(r, 2)}csp{r.randint(100000, 9999999)}{r.choice(['gdb','lqb','ejc','wrb'])};\r\n"
            f"        {w} (PST)")


def _received_from(r: random.Random, prov: dict, rcpt: str, when: datetime) -> str:
    w = format_datetime(when.astimezone(PST))
    if prov.get("sor"):
        how = f"SMTPS id {_hex(r, 8)}-{_hex(r, 12)}sor{r.randint(1000000, 9999999)}.{r.randint(1, 40)}.2027.01.15"
        tls = "(Google Transport Security)"
    else:
        how = f"ESMTPS id {_hex(r, 10)}si{r.randint(1000000, 9999999)}.{r.randint(100, 999)}.2027.01.15"
        tls = "(version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256)"
    return (f"Received: from {prov['host']} ({prov['host']}. [{prov['ip']}])\r\n"
            f"        by mx.google.com with {how}\r\n        for <{rcpt}>\r\n        {tls};\r\n"
            f"        {w} (PST)")


def _dkim_sig(r: random.Random, dom: str, selector: str, ts: int, rcpt_dom: str) -> str:
    return (f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;\r\n        d={dom}; s={selector}; t={ts}; "
            f"x={ts + 604800}; darn={rcpt_dom};\r\n"
            f"        h=to:subject:message-id:date:from:mime-version:from:to:cc:subject\r\n"
            f"         :date:message-id:reply-to;\r\n        bh={_b64(r, 32)};\r\n"
            f"        b={_fold_b64(_b64(r, 256), '         ')}")


def build_message(*, sender: tuple[str, str], to: str | list[str], subject: str, date: str,
                  text: str, html: str | None = None, msgid: str | None = None,
                  in_reply_to: str | None = None, references: list[str] | None = None,
                  cc: str | None = None, client: str = "gmail", extra: dict | None = None,
                  seed: str = "") -> EmailMessage:
    r = _rng(seed + "body")
    m = EmailMessage(policy=SMTP)
    m["MIME-Version"] = "1.0"
    name, addr = sender
    m["From"] = f"{name} <{addr}>" if name else addr
    m["Date"] = date
    m["Message-ID"] = msgid or _msgid_for(r, addr, client)
    if in_reply_to:
        m["In-Reply-To"] = in_reply_to
    if references:
        m["References"] = " ".join(references)
    m["Subject"] = subject
    m["To"] = to if isinstance(to, str) else ", ".join(to)
    if cc:
        m["Cc"] = cc
    for k, v in (extra or {}).items():
        m[k] = v
    if client == "outlook":
        m["Thread-Topic"] = subject
        m["Thread-Index"] = "AQHb" + _b64(r, 18)[:24]
        m["Accept-Language"] = "cs-CZ, en-US"
        m["X-MS-Has-Attach"] = ""
        m["X-MS-TNEF-Correlator"] = ""
    if client == "apple":
        m["X-Mailer"] = "iPhone Mail (22C152)"
    if client == "thunderbird":
        m["User-Agent"] = "Mozilla Thunderbird"
    m.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
    if html is not None:
        m.add_alternative(html, subtype="html", charset="utf-8", cte="quoted-printable")
        for part in m.iter_parts():
            del part["MIME-Version"]
        if client == "gmail":
            m.set_boundary("000000000000" + _hex(r, 16))
        elif client == "apple":
            m.set_boundary("Apple-Mail=_" + _hex(r, 8).upper() + "-" + _hex(r, 4).upper() + "-" + _hex(r, 4).upper())
        elif client == "outlook":
            m.set_boundary("_000_" + _hex(r, 20).upper() + "_")
    return m


def deliver(m: EmailMessage, rcpt: str, *, seed: str, via: str | None = None,
            mailfrom: str | None = None) -> bytes:
    """m as delivered straight from its author to rcpt (a brightlane.io mailbox); via names
    a sending service (PROVIDERS key) that signs for the From domain, mailfrom its envelope."""
    r = _rng(seed + "hops")
    addr = _addr_of(m["From"])
    prov = PROVIDERS[via] if via else _provider(addr)
    env = mailfrom or addr
    when = parsedate_to_datetime(m["Date"]) + timedelta(seconds=r.randint(1, 4))
    ts = int(when.timestamp())
    ar = _auth_results(r, addr, env, prov["selector"], prov["ip"])
    hops = [
        f"Delivered-To: {rcpt}",
        _received_by_google(r, rcpt, when),
        f"X-Received: by 2002:a17:{_hex(r, 3)}:{_hex(r, 4)}:b0:{_hex(r, 3)}:{_hex(r, 4)}:{_hex(r, 4)} with SMTP id "
        f"{_hex(r, 12)}mr{r.randint(1000000, 9999999)}ejc.{r.randint(10, 99)}.{ts}{r.randint(100, 999)};\r\n"
        f"        {format_datetime(when.astimezone(PST))} (PST)",
        _arc_set(r, 1, "none", ar, ts),
        f"Return-Path: <{env}>",
        _received_from(r, prov, rcpt, when),
        f"Received-SPF: pass (google.com: domain of {env} designates {prov['ip']} as permitted sender) client-ip={prov['ip']};",
        ar,
        _dkim_sig(r, addr.rsplit('@', 1)[1], prov["selector"], ts, rcpt.rsplit("@", 1)[1]),
    ]
    if prov.get("sor"):
        hops += [f"X-Google-DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;\r\n        d=1e100.net; s=20230601; t={ts}; x={ts + 604800};\r\n"
                 f"        h=to:subject:message-id:date:from:mime-version:x-gm-message-state\r\n         :from:to:cc:subject:date:message-id:reply-to;\r\n"
                 f"        bh={_b64(r, 32)};\r\n        b={_fold_b64(_b64(r, 256), '         ')}",
                 f"X-Gm-Message-State: AOJu0Y{_b64(r, 60)[:78]}",
                 f"X-Google-Smtp-Source: AGHT+IE{_b64(r, 60)[:78]}"]
    return _join(hops, m)


def autoforward(m: EmailMessage, forwarder: str, rcpt: str, *, seed: str) -> bytes:
    """m delivered to forwarder (a Google Workspace mailbox), then sent on by Gmail's own
    automatic forwarding to rcpt: a +caf_ envelope, X-Forwarded-For/To, ARC i=1 and i=2."""
    r = _rng(seed + "caf")
    addr = _addr_of(m["From"])
    prov = _provider(addr)
    t1 = parsedate_to_datetime(m["Date"]) + timedelta(seconds=r.randint(1, 3))
    t2 = t1 + timedelta(seconds=r.randint(1, 2))
    ts1, ts2 = int(t1.timestamp()), int(t2.timestamp())
    local, fdom = forwarder.split("@")
    caf = f"{local}+caf_={rcpt.replace('@', '=')}@{fdom}"
    fwd_prov = dict(host=f"mail-sor-f{r.randint(41, 79)}.google.com", ip="209.85.220.%d" % r.randint(41, 79), sor=True)
    ar1 = _auth_results(r, addr, addr, prov["selector"], prov["ip"])
    dom = addr.rsplit("@", 1)[1]
    arc_summary = f"i=1 spf=pass spfdomain={dom} dkim=pass dkdomain={dom} dmarc=pass fromdomain={dom}"
    ar2 = _auth_results(r, addr, caf, prov["selector"], fwd_prov["ip"], arc=arc_summary)
    top = [
        f"Delivered-To: {rcpt}",
        _received_by_google(r, rcpt, t2),
        f"X-Forwarded-Encrypted: i=2; AJvYcC{_b64(r, 60)[:80]}",
        f"X-Google-Smtp-Source: AGHT+IF{_b64(r, 60)[:78]}",
        f"X-Received: by 2002:a05:{_hex(r, 4)}:{_hex(r, 3)}:b0:{_hex(r, 3)}:{_hex(r, 4)}:{_hex(r, 4)} with SMTP id "
        f"{_hex(r, 12)}mr{r.randint(1000000, 9999999)}.{r.randint(10, 99)}.{ts2}{r.randint(100, 999)};\r\n"
        f"        {format_datetime(t2.astimezone(PST))} (PST)",
        _arc_set(r, 2, "pass", ar2, ts2),
        f"Return-Path: <{caf}>",
        _received_from(r, fwd_prov, rcpt, t2),
        f"Received-SPF: pass (google.com: domain of {caf} designates {fwd_prov['ip']} as permitted sender) client-ip={fwd_prov['ip']};",
        ar2,
        f"X-Forwarded-To: {rcpt}",
        f"X-Forwarded-For: {forwarder} {rcpt}",
        f"Delivered-To: {forwarder}",
        _received_by_google(r, forwarder, t1),
        f"X-Received: by 2002:a17:{_hex(r, 3)}:{_hex(r, 4)}:b0:{_hex(r, 3)}:{_hex(r, 4)}:{_hex(r, 4)} with SMTP id "
        f"{_hex(r, 12)}mr{r.randint(1000000, 9999999)}.{r.randint(10, 99)}.{ts1}{r.randint(100, 999)};\r\n"
        f"        {format_datetime(t1.astimezone(PST))} (PST)",
        _arc_set(r, 1, "none", ar1, ts1),
        f"Return-Path: <{addr}>",
        _received_from(r, prov, forwarder, t1),
        f"Received-SPF: pass (google.com: domain of {addr} designates {prov['ip']} as permitted sender) client-ip={prov['ip']};",
        ar1,
        _dkim_sig(r, dom, prov["selector"], ts1, fdom),
    ]
    return _join(top, m)


def _addr_of(h: str) -> str:
    from email.utils import parseaddr
    return parseaddr(str(h))[1]


def _join(hops: list[str], m: EmailMessage) -> bytes:
    body = m.as_bytes(policy=SMTP)
    return ("\r\n".join(hops) + "\r\n").encode() + body


def html_from_text(text: str, client: str = "gmail") -> str:
    """The HTML part a mail client writes for a plain message."""
    import html as h
    paras = text.strip("\n").split("\n\n")
    if client == "gmail":
        quote = ""
        last = paras[-1].split("\n")
        if len(last) > 1 and all(x.startswith(">") for x in last[1:]):
            paras = paras[:-1]
            body = "<br>".join(h.escape(x.lstrip("> ").rstrip()) for x in last[1:])
            quote = (f'<br><div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">'
                     f'{h.escape(last[0])}<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
                     f'border-left:1px solid rgb(204,204,204);padding-left:1ex">{body}</blockquote></div>')
        inner = "".join(
            "<div>" + "<br>".join(h.escape(x) for x in p.split("\n")) + "</div><div><br></div>" for p in paras)
        return f'<div dir="ltr">{inner}</div>{quote}\n'
    if client == "outlook":
        inner = "".join(
            '<p class="MsoNormal">' + "<br>\n".join(h.escape(x) for x in p.split("\n")) + "<o:p></o:p></p>\n"
            '<p class="MsoNormal"><o:p>&nbsp;</o:p></p>\n' for p in paras)
        return ('<html xmlns:o="urn:schemas-microsoft-com:office:office"><head>\n'
                '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n'
                '<meta name="Generator" content="Microsoft Word 15 (filtered medium)">\n'
                '<style><!-- p.MsoNormal {margin:0cm; font-size:11.0pt; font-family:"Calibri",sans-serif;} --></style>\n'
                f'</head><body lang="CS" link="#0563C1" vlink="#954F72"><div class="WordSection1">\n{inner}</div></body></html>\n')
    if client == "apple":
        inner = "".join(
            "<div>" + "<br>".join(h.escape(x) for x in p.split("\n")) + "</div><div><br></div>" for p in paras)
        return ('<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head>'
                f'<body dir="auto">{inner}</body></html>\n')
    return "<html><body>" + "".join("<p>" + h.escape(p) + "</p>" for p in paras) + "</body></html>\n"


def dedent(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


# ISO 3779 / 49 CFR 565 check digit.
_TRANS = {**{str(d): d for d in range(10)},
          **dict(zip("ABCDEFGH", range(1, 9))), **dict(zip("JKLMN", range(1, 6))), "P": 7, "R": 9,
          **dict(zip("STUVWXYZ", range(2, 10)))}
_W = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]


def vin_check(v: str) -> str:
    s = sum(_TRANS[c] * w for c, w in zip(v.upper(), _W))
    c = s % 11
    return "X" if c == 10 else str(c)


def make_vin(pattern: str, valid: bool = True) -> str:
    """pattern: 17 characters with '_' at position 9."""
    assert len(pattern) == 17 and pattern[8] == "_", pattern
    good = vin_check(pattern.replace("_", "0"))
    if valid:
        d = good
    else:
        d = "7" if good != "7" else "3"
    v = pattern[:8] + d + pattern[9:]
    assert (vin_check(v) == v[8]) == valid
    return v


def utc(y, mo, d, h, mi, tz=0) -> str:
    return format_datetime(datetime(y, mo, d, h, mi, 0, tzinfo=timezone(timedelta(hours=tz))))
