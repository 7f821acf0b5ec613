"""Writes one .eml the way Gmail delivers it to a Workspace mailbox.

Used by make_set.py; nothing here reads inboxflow.
"""
import hashlib
from email.header import Header
from datetime import timedelta, timezone
from email.utils import formataddr, parsedate_to_datetime

PROVIDERS = {
    "gmail.com": ("mail-sor-f41.google.com", "209.85.220.41", "20230601", "p=NONE sp=QUARANTINE dis=NONE"),
    "outlook.com": ("EUR05-DB8-obe.outbound.protection.outlook.com", "40.92.89.27", "selector1", "p=NONE sp=QUARANTINE dis=NONE"),
    "web.de": ("mout.web.de", "212.227.15.3", "s29768273", "p=QUARANTINE sp=QUARANTINE dis=NONE"),
    "gmx.de": ("mout.gmx.net", "212.227.17.21", "s31663417", "p=QUARANTINE sp=QUARANTINE dis=NONE"),
    "orange.fr": ("smtp-23.smtpout.orange.fr", "80.12.242.23", "t20230301", "p=NONE sp=NONE dis=NONE"),
    "libero.it": ("smtp-35.iol.local", "213.209.10.35", "s2021", "p=NONE sp=NONE dis=NONE"),
    "seznam.cz": ("mxf2.seznam.cz", "77.75.76.45", "szn20221014", "p=NONE sp=NONE dis=NONE"),
    "telia.com": ("smtp-out11.telia.net", "81.236.60.154", "t2023", "p=NONE sp=NONE dis=NONE"),
    "uol.com.br": ("smtpout1.uol.com.br", "200.147.36.15", "uol2021", "p=NONE sp=NONE dis=NONE"),
    "icloud.com": ("qs51p00im-qukt01072701.me.com", "17.57.155.16", "1a1hai", "p=QUARANTINE sp=QUARANTINE dis=NONE"),
}


def _h(text: str) -> str:
    try:
        text.encode("ascii")
        return text
    except UnicodeEncodeError:
        return Header(text, "utf-8").encode()


def _addr(name: str, addr: str) -> str:
    return formataddr((name, addr), charset="utf-8")


def make(mailbox, from_name, from_addr, subject, date, body, *, domain_company=None,
         extra_headers=()):
    """date: RFC 5322 date string (already in January 2027, before 08:00 UTC)."""
    local, domain = from_addr.split("@")
    sent = parsedate_to_datetime(date)
    assert sent.astimezone(timezone.utc).hour < 8 and (sent.astimezone(timezone.utc).year, sent.astimezone(timezone.utc).month) == (2027, 1), date
    got = (sent + timedelta(seconds=2)).astimezone(timezone(timedelta(hours=-8)))
    rdate = got.strftime("%a, %d %b %Y %H:%M:%S -0800 (PST)")
    seed = hashlib.sha256((from_addr + subject + date).encode()).hexdigest()
    if domain in PROVIDERS:
        host, ip, selector, policy = PROVIDERS[domain]
    else:
        host, ip, selector, policy = (f"mail.{domain}", "198.51.100." + str(int(seed[:2], 16) % 200 + 20),
                                      "s1", "p=NONE sp=NONE dis=NONE")
    if domain == "gmail.com":
        msgid = f"<CA{seed[:6].upper()}+{seed[6:22]}-{seed[22:30].upper()}@mail.gmail.com>"
    elif domain == "outlook.com":
        msgid = f"<AM9P{seed[:3].upper()}MB{seed[3:7]}{seed[7:19].upper()}@AM9P{seed[19:22].upper()}MB{seed[22:26]}.eurprd05.prod.outlook.com>"
    else:
        msgid = f"<{seed[:12]}.{seed[12:20]}@{host}>"
    bh = seed[30:42]
    lines = [
        f"Delivered-To: {mailbox}",
        f"Received: by 2002:a05:7300:{seed[40:44]}:b0:{seed[44:47]}:{seed[47:51]}:{seed[51:55]} with SMTP id k{seed[55:57]}csp{int(seed[57:62], 16) % 900000 + 100000}dyc;",
        f"        {rdate}",
        f"Return-Path: <{from_addr}>",
        f"Received: from {host} ({host}. [{ip}])",
        f"        by mx.google.com with ESMTPS id {seed[2:14]}.{int(seed[14:18], 16)}.2027.01.{got.day:02d}",
        f"        for <{mailbox}>",
        "        (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256);",
        f"        {rdate}",
        "Authentication-Results: mx.google.com;",
        f"       dkim=pass header.i=@{domain} header.s={selector} header.b={bh};",
        f"       spf=pass (google.com: domain of {from_addr} designates {ip} as permitted sender) smtp.mailfrom={from_addr};",
        f"       dmarc=pass ({policy}) header.from={domain}",
        f"From: {_addr(from_name, from_addr)}",
        f"To: {mailbox}",
        f"Subject: {_h(subject)}",
        f"Message-ID: {msgid}",
        f"Date: {date}",
    ]
    lines += list(extra_headers)
    lines += [
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="UTF-8"',
        "Content-Transfer-Encoding: 8bit",
        "",
    ]
    text = "\r\n".join(lines) + "\r\n" + body.strip("\n").replace("\n", "\r\n") + "\r\n"
    return text.encode("utf-8"), msgid
