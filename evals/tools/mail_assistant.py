# ruff: noqa: RUF001  (the typographic quotes, dashes and fullwidth marks are the data)
"""Mail for the assistant graph: Alex's own mailbox alex@brightlane.io."""

from __future__ import annotations

from mailkit import CET, JST, addr, auth_pass, bounce, d, mail

ALEX = addr("Alex Morgan", "alex@brightlane.io")
BOX = "alex@brightlane.io"


def person(path, name, address, subject, body, when, mid, *, authenticated=True, **kw) -> None:
    mail(
        path,
        frm=addr(name, address),
        to=ALEX,
        subject=subject,
        date=when,
        mid=mid,
        delivered_to=BOX,
        auth=auth_pass(address) if authenticated else None,
        body=body,
        **kw,
    )


def build() -> None:
    person(
        "assistant/thank-you-call-yesterday.eml",
        "Dana Lee",
        "dana.lee@partnerco.example",
        "Thanks for yesterday",
        "Hi Alex,\n\nThanks for the call yesterday - really helpful to walk through the Q1 plan "
        "together. Talk soon!\n\nDana\n",
        d(13, 9, 10),
        "CADl-thanks-1@partnerco.example",
    )
    person(
        "assistant/meeting-45-min-thursday-afternoon.eml",
        "Dana Lee",
        "dana.lee@partnerco.example",
        "Contract review",
        "Hi Alex,\n\nCould we meet for 45 minutes on Thursday afternoon to review the renewal "
        "contract? Anything after 1 pm works for me.\n\nThanks,\nDana\n",
        d(11, 10, 0),
        "CADl-contract-1@partnerco.example",
    )
    person(
        "assistant/de-meeting-request.eml",
        "Katrin Weber",
        "katrin.weber@rheinmedia.example",
        "Kurzes Gespräch nächste Woche?",
        "Hallo Alex,\n\nhätten Sie nächste Woche Zeit für ein kurzes Gespräch über die "
        "Verlängerung unseres Vertrags? Dienstag oder Mittwoch würde mir gut passen.\n\n"
        "Viele Grüße\nKatrin Weber\n",
        d(14, 9, 30, CET),
        "CAKw-gespraech-1@rheinmedia.example",
        cte="quoted-printable",
    )
    person(
        "assistant/fr-report-request.eml",
        "Julien Moreau",
        "julien.moreau@brightlane.io",
        "Rapport trimestriel",
        "Bonjour Alex,\n\nPourriez-vous m’envoyer le rapport trimestriel avant la réunion de "
        "direction de vendredi ? J’en ai besoin pour préparer ma présentation.\n\nMerci,\nJulien\n",
        d(14, 10, 15, CET),
        "CAJm-rapport-1@brightlane.io",
        cte="quoted-printable",
    )
    person(
        "assistant/cs-fyi-invoice-iso8859-2.eml",
        "Tereza Králová",
        "tereza.kralova@brightlane.io",
        "Pro informaci: faktura za leden",
        "Ahoj Alexi,\n\npro informaci: faktura od dodavatele cloudu za leden je schválená a "
        "zaplacená. Není potřeba nic dělat.\n\nTereza\n",
        d(14, 11, 0, CET),
        "CATk-faktura-1@brightlane.io",
        charset="iso-8859-2",
        cte="quoted-printable",
    )
    mail(
        "assistant/ja-newsletter-list-unsubscribe.eml",
        frm=addr("クラウド通信", "news@cloud-tsushin.example"),
        to=ALEX,
        subject="【今週のクラウド通信】生成AIの最新動向",
        date=d(14, 8, 0, JST),
        mid="ct-2027-02@cloud-tsushin.example",
        delivered_to=BOX,
        charset="iso-2022-jp",
        cte="7bit",
        headers=[("List-Unsubscribe", "<https://cloud-tsushin.example/unsubscribe?u=88213>")],
        body="今週のクラウド通信をお届けします。\n生成AIの最新動向と導入事例をご紹介します。\n",
    )
    person(
        "assistant/es-budget-question.eml",
        "Lucía Navarro",
        "lucia.navarro@brightlane.io",
        "Presupuesto del Q2",
        "Hola Alex:\n\n¿Cuál es el presupuesto aprobado para marketing en el Q2? Necesito "
        "confirmarlo antes de firmar con la agencia.\n\nGracias,\nLucía\n",
        d(14, 12, 0, CET),
        "CALn-presupuesto-1@brightlane.io",
        cte="quoted-printable",
    )
    mail(
        "assistant/lookalike-ceo-gift-cards.eml",
        frm=addr("Jordan Blake", "jordan.blake@brightlane-io.com"),
        to=ALEX,
        subject="Are you at your desk?",
        date=d(14, 7, 12),
        mid="BL1-giftcards-9@brightlane-io.com",
        delivered_to=BOX,
        body=(
            "Alex,\n\nAre you at your desk? I need you to buy five $200 Apple gift cards for a "
            "client today and send me the codes. Keep it between us for now, I am in meetings "
            "all day.\n\nJordan\nCEO, Brightlane\n"
        ),
    )
    mail(
        "assistant/loop-auto-submitted-ooo.eml",
        frm=addr("Dana Lee", "dana.lee@partnerco.example"),
        to=ALEX,
        subject="Out of Office: Contract review",
        date=d(12, 8, 0),
        mid="ooo-dl-3@partnerco.example",
        delivered_to=BOX,
        headers=[("Auto-Submitted", "auto-replied")],
        body="I am out of the office until Monday, 18 January. For urgent matters call +1 555 0100.\n",
    )
    mail(
        "assistant/loop-mailer-daemon.eml",
        frm=addr("Mail Delivery Subsystem", "mailer-daemon@googlemail.com"),
        to=ALEX,
        subject="Delivery Status Notification (Failure)",
        date=d(14, 13, 0),
        mid="bounce-al-77@mx.google.example",
        delivered_to=BOX,
        return_path="<>",
        content=bounce(
            "j.smith@closed-agency.example",
            "Alex Morgan <alex@brightlane.io>",
            "Re: Campaign brief",
            "CAAm-brief-2@brightlane.io",
            d(14, 12, 59),
        ),
    )
    mail(
        "assistant/loop-list-id-all-hands.eml",
        frm=addr("People Team via all-staff", "all-staff@brightlane.io"),
        to=addr("", "all-staff@brightlane.io"),
        subject="[all-staff] Office closed on Monday for maintenance",
        date=d(14, 16, 0),
        mid="all-staff-4471@brightlane.io",
        delivered_to=BOX,
        headers=[("List-Id", "All staff <all-staff.brightlane.io>"), ("Precedence", "list")],
        body="Hi all, the office is closed on Monday for electrical maintenance. Work from home.\n",
    )
    mail(
        "assistant/loop-precedence-bulk.eml",
        frm=addr("SaaS Weekly", "editor@saasweekly.example"),
        to=ALEX,
        subject="Five pricing experiments that worked in 2026",
        date=d(14, 5, 0),
        mid="sw-288@saasweekly.example",
        delivered_to=BOX,
        headers=[("Precedence", "bulk")],
        body="This week: five pricing experiments that worked. Reply and tell us yours!\n",
    )
    mail(
        "assistant/loop-noreply-security-code.eml",
        frm=addr("Accounts", "no-reply@accounts.cloudsuite.example"),
        to=ALEX,
        subject="Your verification code is 482913",
        date=d(14, 9, 2),
        mid="otp-482913@accounts.cloudsuite.example",
        delivered_to=BOX,
        body="Your verification code is 482913. It expires in 10 minutes. Didn't ask for it? "
        "Contact us.\n",
    )
    person(
        "assistant/colleague-question-board-meeting.eml",
        "Priya Raman",
        "priya.raman@brightlane.io",
        "Board meeting tomorrow",
        "Hi Alex,\n\nWhat time does the board meeting start tomorrow, and is it in the big room "
        "or on Meet?\n\nPriya\n",
        d(14, 15, 20),
        "CAPr-board-1@brightlane.io",
    )
    mail(
        "assistant/html-only-invoice-available.eml",
        frm=addr("Cloudsuite Billing", "billing@cloudsuite.example"),
        to=ALEX,
        subject="Your invoice INV-2031 for January is available",
        date=d(14, 6, 10),
        mid="inv-2031@billing.cloudsuite.example",
        delivered_to=BOX,
        auth=auth_pass("billing@cloudsuite.example"),
        html_only=True,
        cte="quoted-printable",
        html=(
            '<html><body><table width="600"><tr><td><h3>Invoice INV-2031</h3>'
            "<p>Your invoice for January ($1,284.00) is available. It will be charged to the "
            "card on file on 20 January. No action is needed.</p></td></tr></table></body></html>"
        ),
    )
    person(
        "assistant/forwarded-partnership-call.eml",
        "Jordan Blake",
        "jordan.blake@brightlane.io",
        "Fwd: Partnership proposal",
        "Alex - can you reply to Mei and set up a call with her next week?\n\nJordan\n\n"
        "---------- Forwarded message ---------\nFrom: Mei Tanaka <mei.tanaka@orbitpay.example>\n"
        "Date: Wed, Jan 13, 2027 at 4:10 PM\nSubject: Partnership proposal\n"
        "To: Jordan Blake <jordan.blake@brightlane.io>\n\n"
        "Hi Jordan, we would love to explore an integration between OrbitPay and Brightlane. "
        "Would your team be open to a call?\n\nMei\n",
        d(14, 8, 45),
        "CAJb-fwd-orbit@brightlane.io",
    )
    person(
        "assistant/quoted-follow-up-integration.eml",
        "Dana Lee",
        "dana.lee@partnerco.example",
        "Re: Quick call about the Q1 integration",
        "Hi Alex,\n\nAny news on the integration plan? We need to book engineering time by "
        "Friday.\n\nDana\n\nOn Mon, Jan 11, 2027 at 9:30 AM Dana Lee <dana.lee@partnerco.example> "
        "wrote:\n> Hi Alex,\n>\n> Could we schedule a call to go through the Q1 integration plan?\n"
        "> Any time this week works for me.\n",
        d(15, 9, 0),
        "CADl-q1-3@partnerco.example",
        in_reply_to="q1-call-7f3a@partnerco.example",
        references=["q1-call-7f3a@partnerco.example"],
    )
    person(
        "assistant/cold-sales-seo.eml",
        "Brett Collins",
        "brett@growthhackers-agency.example",
        "15 minutes to 3x your signups?",
        "Hi Alex,\n\nI'd love 15 minutes of your time next week to show how we tripled signups "
        "for three SaaS companies like Brightlane. Are you free Tuesday?\n\nBrett\n",
        d(14, 14, 44),
        "gh-seq-3-4410@growthhackers-agency.example",
        authenticated=False,
    )
    person(
        "assistant/ja-meeting-thursday-sjis.eml",
        "高橋 翔",
        "sho.takahashi@nihon-retail.example",
        "打ち合わせのお願い",
        "Alex 様\n\n来週木曜日の午後に、30分ほどオンラインでお打ち合わせできますでしょうか。"
        "\n新機能のロードマップについて伺いたいです。\n\n高橋 翔\n",
        d(14, 11, 0, JST),
        "CASt-uchiawase-1@nihon-retail.example",
        charset="shift_jis",
        cte="base64",
    )
    person(
        "assistant/de-out-of-office-subject.eml",
        "Katrin Weber",
        "katrin.weber@rheinmedia.example",
        "Abwesenheitsnotiz: Kurzes Gespräch nächste Woche?",
        "Ich bin bis zum 25. Januar nicht im Büro und habe keinen Zugriff auf meine E-Mails.\n",
        d(14, 9, 31, CET),
        "ooo-kw-1@rheinmedia.example",
        authenticated=False,
        cte="quoted-printable",
    )
    person(
        "assistant/de-thank-you.eml",
        "Katrin Weber",
        "katrin.weber@rheinmedia.example",
        "Vielen Dank!",
        "Hallo Alex,\n\nvielen Dank für die schnelle Hilfe gestern, jetzt läuft alles.\n\n"
        "Viele Grüße\nKatrin\n",
        d(15, 10, 0, CET),
        "CAKw-danke-1@rheinmedia.example",
    )
    person(
        "assistant/cs-meeting-monday-hour.eml",
        "Ondřej Svoboda",
        "ondrej.svoboda@brightlane.io",
        "Schůzka k rozpočtu",
        "Ahoj Alexi,\n\nmůžeme se potkat v pondělí v 10:00 na hodinu kvůli rozpočtu na Q2?\n\n"
        "Ondřej\n",
        d(14, 13, 10, CET),
        "CAOs-rozpocet-1@brightlane.io",
        cte="base64",
    )
